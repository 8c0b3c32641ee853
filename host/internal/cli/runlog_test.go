package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestLoggerVerbosityLevels: verbosity-1 lines are INFO (a collector
// filtering at INFO keeps them), deeper ones DEBUG, each with v=N; lines
// beyond the configured verbosity are dropped.
func TestLoggerVerbosityLevels(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, 2).WithValues("component", "nri")
	log.Info("zero")
	log.V(1).Info("one", "k", "x")
	log.V(2).Info("two")
	log.V(3).Info("three")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []struct{ msg, level, v string }{{"zero", "level=INFO", ""}, {"one", "level=INFO", "v=1"}, {"two", "level=DEBUG", "v=2"}}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		l := lines[i]
		if !strings.Contains(l, "msg="+w.msg) || !strings.Contains(l, w.level+" ") || !strings.Contains(l, "component=nri") {
			t.Errorf("line %d = %q, want msg=%s at %s with component=nri", i, l, w.msg, w.level)
		}
		if w.v != "" && !strings.HasSuffix(l, " "+w.v) {
			t.Errorf("line %d = %q, want it to end with %s", i, l, w.v)
		}
		if strings.Contains(l, "DEBUG+") {
			t.Errorf("line %d = %q has slog's offset level", i, l)
		}
	}
}
