package cli

import (
	"context"
	"io"
	"log/slog"

	"github.com/go-logr/logr"
)

// newLogger logs text to w; verbosity v shows logr's V(0)..V(v). Lines of
// verbosity 1 are INFO and lines of verbosity 2 and more DEBUG, each with
// the attribute v=N, so that a collector filtering at INFO keeps what
// verbosity 1 asked for (slog's own rendering of V(1) is "DEBUG+3").
func newLogger(w io.Writer, v int) logr.Logger {
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.Level(-v)})
	return logr.FromSlogHandler(verbosityHandler{h})
}

// verbosityHandler maps logr's verbosity levels (slog levels -1, -2, …) to
// INFO and DEBUG with a v attribute.
type verbosityHandler struct{ slog.Handler }

func (h verbosityHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelInfo { // logr's V(n), n ≥ 1, is slog level -n
		v := int(slog.LevelInfo - r.Level)
		level := slog.LevelDebug
		if v == 1 {
			level = slog.LevelInfo
		}
		nr := slog.NewRecord(r.Time, level, r.Message, r.PC)
		r.Attrs(func(a slog.Attr) bool { nr.AddAttrs(a); return true })
		nr.AddAttrs(slog.Int("v", v))
		r = nr
	}
	return h.Handler.Handle(ctx, r)
}

func (h verbosityHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return verbosityHandler{h.Handler.WithAttrs(as)}
}

func (h verbosityHandler) WithGroup(name string) slog.Handler {
	return verbosityHandler{h.Handler.WithGroup(name)}
}
