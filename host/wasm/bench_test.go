package wasm_test

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/native"
)

func benchTransports(b *testing.B) map[string]abi.Transport {
	ctx := context.Background()
	init := func(t abi.Transport) {
		if _, err := abi.NewClient(t).Init(ctx, &abi.InitRequest{}); err != nil {
			b.Fatal(err)
		}
	}
	out := map[string]abi.Transport{}
	r, err := native.New(&conformance.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	init(r)
	out["native"] = r
	for _, mode := range []wasm.Interrupt{wasm.InterruptInstrumented, wasm.InterruptWazero, wasm.InterruptNone} {
		p, err := wasm.Load(ctx, "conformance", conformanceModule(b), wasm.WithCacheDir(sharedCache), wasm.WithInterrupt(mode))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Close(ctx) })
		init(p)
		out["wasm-"+mode.String()] = p
	}
	p, err := wasm.Load(ctx, "conformance", rustConformance, wasm.WithCacheDir(sharedCache))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(ctx) })
	init(p)
	out["rust-instrumented"] = p
	return out
}

// BenchmarkCall measures one call through each transport: the empty call
// (RunPodSandbox, nothing to decode or answer) and a 1 KiB request/response round
// trip (CreateContainer). rust-instrumented is the Rust SDK's build of the same
// policy, with the default deadline enforcement.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	big := request1K()
	b.Logf("1K request: %d bytes", big.SizeVT())
	for _, name := range []string{"native", "wasm-instrumented", "wasm-wazero", "wasm-none", "rust-instrumented"} {
		t := benchTransports(b)[name]
		client := abi.NewClient(t)
		b.Run("empty/"+name, func(b *testing.B) {
			req := &abi.RunPodSandboxRequest{}
			for b.Loop() {
				if _, err := client.RunPodSandbox(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("1KiB/"+name, func(b *testing.B) {
			b.SetBytes(int64(big.SizeVT()))
			for b.Loop() {
				if _, err := client.CreateContainer(ctx, big); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoad measures Load of the conformance module — the 9 MB Go build and
// the 0.3 MB Rust build — from a warm compilation cache (instrumentation, cache
// verification, compilation from the cache, instantiation, _initialize and the
// handshake), from an empty cache and a compiled-code seed (the seed's checks
// and copy on top), and cold.
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	for _, m := range []struct {
		name   string
		module []byte
	}{{"go", conformanceModule(b)}, {"rust", rustConformance}} {
		b.Run("warm-cache/"+m.name, func(b *testing.B) {
			dir := b.TempDir()
			p, err := wasm.Load(ctx, "conformance", m.module, wasm.WithCacheDir(dir))
			if err != nil {
				b.Fatal(err)
			}
			p.Close(ctx)
			for b.Loop() {
				p, err := wasm.Load(ctx, "conformance", m.module, wasm.WithCacheDir(dir))
				if err != nil {
					b.Fatal(err)
				}
				p.Close(ctx)
			}
		})
		b.Run("seed/"+m.name, func(b *testing.B) {
			seed := b.TempDir()
			if err := wasm.Precompile(ctx, seed, map[string][]byte{"conformance": m.module}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				b.StopTimer()
				dir := b.TempDir()
				b.StartTimer()
				p, err := wasm.Load(ctx, "conformance", m.module, wasm.WithCacheDir(dir), wasm.WithSeedDir(seed))
				if err != nil {
					b.Fatal(err)
				}
				p.Close(ctx)
			}
		})
		b.Run("cold/"+m.name, func(b *testing.B) {
			for b.Loop() {
				p, err := wasm.Load(ctx, "conformance", m.module)
				if err != nil {
					b.Fatal(err)
				}
				p.Close(ctx)
			}
		})
	}
}
