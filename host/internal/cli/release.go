package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// exeMapping is one mapping of the executable in /proc/self/smaps.
type exeMapping struct {
	lo, hi    uintptr
	rss       int64 // bytes resident
	anonymous int64 // bytes of private copies (pages written since the mapping)
}

// releasable lists the mappings of the file exe in smaps (/proc/PID/smaps'
// format) whose pages can be dropped from the page tables without losing
// anything: private, not writable, and holding no private copy of a page (a
// page relocated by the dynamic loader would be one), so that a page read
// again is read from the file, as it was. exe is the path as smaps shows it
// (/proc/self/exe's link).
func releasable(smaps io.Reader, exe string) ([]exeMapping, error) {
	var out []exeMapping
	var cur *exeMapping // the current mapping, nil when not a candidate
	flush := func() {
		if cur != nil && cur.anonymous == 0 && cur.rss > 0 {
			out = append(out, *cur)
		}
		cur = nil
	}
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.HasSuffix(f[0], ":") { // a field of the current mapping
			if cur == nil || len(f) < 2 {
				continue
			}
			var dst *int64
			switch f[0] {
			case "Rss:":
				dst = &cur.rss
			case "Anonymous:":
				dst = &cur.anonymous
			default:
				continue
			}
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("smaps: %q: %w", line, err)
			}
			*dst = kb << 10
			continue
		}
		// A mapping's header: lo-hi perms offset dev inode [path].
		flush()
		if len(f) < 6 || len(f[1]) != 4 {
			continue
		}
		if path := strings.Join(f[5:], " "); path != exe || f[1][1] == 'w' || f[1][3] != 'p' {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, fmt.Errorf("smaps: mapping %q: no address range", line)
		}
		l, err1 := strconv.ParseUint(lo, 16, 64)
		h, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || h <= l {
			return nil, fmt.Errorf("smaps: mapping %q: bad address range %q", line, f[0])
		}
		cur = &exeMapping{lo: uintptr(l), hi: uintptr(h)}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("smaps: %w", err)
	}
	return out, nil
}

// releasePoll is how often releaseWhenReady checks readiness.
const releasePoll = 100 * time.Millisecond

// releaseWhenReady waits until ready answers nil (the runtime's first
// Synchronize was handled), then drops the executable's start-up pages from
// the agent's page tables (releaseExecutable) and logs how much. It returns
// when ctx ends first.
func releaseWhenReady(ctx context.Context, ready func() error, log logr.Logger) {
	t := time.NewTicker(releasePoll)
	defer t.Stop()
	for ready() != nil {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	n, err := releaseExecutable()
	if err != nil {
		log.Error(err, "the executable's start-up pages stay resident")
		return
	}
	log.V(1).Info("released the executable's start-up pages", "MiB", float64(n)/(1<<20))
}
