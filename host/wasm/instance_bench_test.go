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
	c, err := compile(ctx, "conformance", module, &o, hostLog(o.logger, o.logs))
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

// BenchmarkCompileFromCache separates a warm Load's parts: wazero's own compile
// from its on-disk cache (decode, validate, load machine code) and our checks
// around it (checksum verification, the instrumented-module cache).
func BenchmarkCompileFromCache(b *testing.B) {
	ctx := context.Background()
	module, _ := builtin.Module("conformance")
	o := defaultOptions()
	o.cacheDir = b.TempDir()
	c, err := compile(ctx, "conformance", module, &o, hostLog(o.logger, o.logs))
	if err != nil {
		b.Fatal(err)
	}
	c.close(ctx)
	instrumented, err := c.instrument(module, instrumentedRel(module))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("wazero", func(b *testing.B) {
		for b.Loop() {
			mod, rt, err := c.compileOnce(ctx, instrumented, &o, true)
			if err != nil {
				b.Fatal(err)
			}
			mod.Close(ctx)
			rt.Close(ctx)
		}
	})
	b.Run("verify+instrumented", func(b *testing.B) {
		for b.Loop() {
			cc, err := openCache(o.cacheDir, o.logger)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := cc.instrumented(instrumentedRel(module), module, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
