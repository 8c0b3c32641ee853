package policy_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// captureHandler records every slog record it handles.
type captureHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureHandler) WithGroup(string) slog.Handler      { return h }

// captureLog points slog's default logger at a captureHandler for the test.
func captureLog(t *testing.T) *captureHandler {
	t.Helper()
	prev := slog.Default()
	h := &captureHandler{}
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return h
}

func TestLogNative(t *testing.T) {
	tests := []struct {
		name  string
		log   func(format string, args ...any)
		level slog.Level
	}{
		{"debug", policy.Log.Debugf, slog.LevelDebug},
		{"info", policy.Log.Infof, slog.LevelInfo},
		{"warn", policy.Log.Warnf, slog.LevelWarn},
		{"error", policy.Log.Errorf, slog.LevelError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := captureLog(t)
			tt.log("%s message %d", tt.name, 7)
			if len(h.records) != 1 {
				t.Fatalf("got %d records, want 1", len(h.records))
			}
			r := h.records[0]
			if r.Level != tt.level {
				t.Errorf("level = %v, want %v", r.Level, tt.level)
			}
			if want := tt.name + " message 7"; r.Message != want {
				t.Errorf("message = %q, want %q", r.Message, want)
			}
			var source string
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "source" {
					source = a.Value.String()
				}
				return true
			})
			if source != "policy" {
				t.Errorf("source attribute = %q, want %q", source, "policy")
			}
		})
	}
}

func TestLogCutsLongMessages(t *testing.T) {
	tests := []struct {
		name    string
		length  int
		wantLen int
	}{
		{"short", 10, 10},
		{"at limit", abi.MaxLogMessage, abi.MaxLogMessage},
		{"over limit", abi.MaxLogMessage + 1, abi.MaxLogMessage},
		{"far over limit", 3 * abi.MaxLogMessage, abi.MaxLogMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := captureLog(t)
			policy.Log.Infof("%s", strings.Repeat("x", tt.length))
			if len(h.records) != 1 {
				t.Fatalf("got %d records, want 1", len(h.records))
			}
			if got := len(h.records[0].Message); got != tt.wantLen {
				t.Errorf("message length = %d, want %d", got, tt.wantLen)
			}
		})
	}
}

func TestLogCutsOnARuneBoundary(t *testing.T) {
	h := captureLog(t)
	policy.Log.Infof("%sé", strings.Repeat("x", abi.MaxLogMessage-1))
	msg := h.records[0].Message
	if !utf8.ValidString(msg) || len(msg) != abi.MaxLogMessage-1 {
		t.Fatalf("message of %d bytes, valid UTF-8 %v; want %d bytes of valid UTF-8", len(msg), utf8.ValidString(msg), abi.MaxLogMessage-1)
	}
}
