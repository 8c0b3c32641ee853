package wasm

import (
	"context"
	"testing"

	"github.com/nriwasm/nriwasm/policies/builtin"
)

// BenchmarkInstantiate measures what a rebuild costs before the RestoreFunc:
// instantiate the compiled module, run _initialize (the Go runtime's start) and
// the version handshake.
func BenchmarkInstantiate(b *testing.B) {
	ctx := context.Background()
	module, _ := builtin.Module("conformance")
	o := defaultOptions()
	c, err := compile(ctx, "conformance", module, &o, hostLog(o.logger))
	if err != nil {
		b.Fatal(err)
	}
	defer c.close(ctx)
	for b.Loop() {
		inst, err := instantiate(ctx, "conformance", c, &o, o.logger)
		if err != nil {
			b.Fatal(err)
		}
		inst.close(ctx)
	}
}
