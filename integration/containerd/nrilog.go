//go:build integration

package containerd

import (
	"context"
	"fmt"
	"sync"
	"testing"

	nrilog "github.com/containerd/nri/pkg/log"
)

// NRILogger returns a logger for an NRI stub (stub.WithLogger) that writes
// to t's log, prefixed, until t's cleanup; later lines (a stub closing after
// the test) are dropped instead of panicking.
func NRILogger(t testing.TB, prefix string) nrilog.Logger {
	l := &testLogger{t: t, prefix: prefix}
	t.Cleanup(func() {
		l.mu.Lock()
		l.done = true
		l.mu.Unlock()
	})
	return l
}

type testLogger struct {
	mu     sync.Mutex
	t      testing.TB
	prefix string
	done   bool
}

func (l *testLogger) logf(level, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Logf("%s %s: %s", l.prefix, level, fmt.Sprintf(format, args...))
	}
}

func (l *testLogger) Debugf(_ context.Context, format string, args ...any) {
	l.logf("debug", format, args...)
}

func (l *testLogger) Infof(_ context.Context, format string, args ...any) {
	l.logf("info", format, args...)
}

func (l *testLogger) Warnf(_ context.Context, format string, args ...any) {
	l.logf("warn", format, args...)
}

func (l *testLogger) Errorf(_ context.Context, format string, args ...any) {
	l.logf("error", format, args...)
}
