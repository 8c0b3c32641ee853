package wasm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
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
// and copy on top), on the interpreter (no compile: how a policy in neither
// cache nor seed starts, WithBackgroundCompile), and cold.
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
		b.Run("interpreter/"+m.name, func(b *testing.B) {
			for b.Loop() {
				p, err := wasm.Load(ctx, "conformance", m.module, wasm.WithEngine(wasm.EngineInterpreter))
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

// BenchmarkEngines measures topology-aware's decisions compiled and on
// wazero's interpreter (where a policy not compiled yet runs, WithBackgroundCompile),
// on the 144-CPU machine with 100 live Burstable containers: one
// iteration creates a Guaranteed 2-CPU container (exclusive CPUs, updates to
// the shared pool's members) and removes it. Reports each call's p50 and
// p99 (create-, remove-).
func BenchmarkEngines(b *testing.B) {
	module, ok := builtin.Module("topology-aware")
	if !ok {
		b.Fatal("policies/builtin lacks topology-aware.wasm: run make policies")
	}
	for _, engine := range []wasm.Engine{wasm.EngineCompiler, wasm.EngineInterpreter} {
		b.Run(engine.String(), func(b *testing.B) {
			p, err := wasm.Load(context.Background(), "topology-aware", module, wasm.WithEngine(engine), wasm.WithCacheDir(sharedCache), wasm.WithLogger(logr.Discard()))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { p.Close(context.Background()) })
			rt, err := policytest.OpenOnMachine(b, p, "Server4Socket144CPU", "", nil)
			if err != nil {
				b.Fatal(err)
			}
			for i := range 100 {
				rt.Create(policytest.Container(fmt.Sprintf("live%03d", i), 200))
			}
			var create, remove policytest.Latencies
			for b.Loop() {
				create.Time(func() { rt.Create(policytest.Container("bench", 2000).Limited(2000).Guaranteed()) })
				remove.Time(func() { rt.Remove("bench") })
			}
			create.Report(b, "create-")
			remove.Report(b, "remove-")
		})
	}
}
