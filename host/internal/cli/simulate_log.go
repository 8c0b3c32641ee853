package cli

import (
	"context"
	"log/slog"
)

// warnTee is a slog handler that passes every record on to next and hands
// the policy's warnings to warn, for simulate's report. A policy's warning,
// Wasm (host/wasm's log import) or native (sdk/go/policy), is a record at
// slog's Warn level with "source"="policy".
type warnTee struct {
	next slog.Handler
	warn func(string)
	// attrs are those a WithAttrs call bound, which the records do not carry.
	attrs []slog.Attr
}

func (h *warnTee) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h *warnTee) Handle(ctx context.Context, r slog.Record) error {
	if h.isPolicyWarning(r) {
		h.warn(r.Message)
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *warnTee) isPolicyWarning(r slog.Record) bool {
	if r.Level < slog.LevelWarn || r.Level >= slog.LevelError {
		return false
	}
	policy := false
	check := func(a slog.Attr) bool {
		policy = a.Key == "source" && a.Value.String() == "policy"
		return !policy
	}
	for _, a := range h.attrs {
		if !check(a) {
			return true
		}
	}
	r.Attrs(check)
	return policy
}

func (h *warnTee) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &warnTee{next: h.next.WithAttrs(attrs), warn: h.warn, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *warnTee) WithGroup(name string) slog.Handler {
	return &warnTee{next: h.next.WithGroup(name), warn: h.warn, attrs: h.attrs}
}
