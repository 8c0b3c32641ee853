package wasm

import (
	"bytes"
	"strings"
	"sync"
)

// output keeps the tail of what a guest writes to stdout and stderr, at most
// limit bytes, until the host takes it after a call.
type output struct {
	mu    sync.Mutex
	limit int
	buf   bytes.Buffer
	lost  int
}

func newOutput(limit int) *output { return &output{limit: limit} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	if len(p) > o.limit {
		o.lost += len(p) - o.limit
		p = p[len(p)-o.limit:]
	}
	if over := o.buf.Len() + len(p) - o.limit; over > 0 {
		o.lost += over
		o.buf.Next(over)
	}
	o.buf.Write(p)
	return n, nil
}

// take returns and clears what was kept, noting how much was dropped.
func (o *output) take() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.buf.Len() == 0 && o.lost == 0 {
		return ""
	}
	var b strings.Builder
	if o.lost > 0 {
		b.WriteString("[… earlier output dropped …]\n")
	}
	b.Write(o.buf.Bytes())
	o.buf.Reset()
	o.lost = 0
	return b.String()
}
