package interrupt

import (
	"context"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

func BenchmarkInstrument(b *testing.B) {
	b.SetBytes(int64(len(spinWasm)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Instrument(spinWasm); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSpin(b *testing.B) {
	instrumented := instrumentFixture(b)
	cases := []struct {
		name   string
		config wazero.RuntimeConfig
		module []byte
		ctx    func() (context.Context, context.CancelFunc)
	}{
		{"plain", wazero.NewRuntimeConfigCompiler(), spinWasm, nil},
		{"instrumented", wazero.NewRuntimeConfigCompiler(), instrumented, nil},
		{"wazero_close_on_ctx_done", wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true), spinWasm,
			func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Hour)
			}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			g := newGuest(b, c.config, c.module)
			ctx := context.Background()
			if c.ctx != nil {
				var cancel context.CancelFunc
				ctx, cancel = c.ctx()
				defer cancel()
			}
			for b.Loop() {
				if _, err := g.call(ctx, 100000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
