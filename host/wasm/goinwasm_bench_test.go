package wasm_test

import (
	"context"
	_ "embed"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/nriwasm/nriwasm/host/wasm/internal/goinwasm"
)

// goInWasmModule is internal/goinwasm's workloads compiled to Wasm with no ABI
// around them (testdata/goinwasm), built by make policies. Rebuild it from
// host/wasm with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -o testdata/goinwasm.wasm ./testdata/goinwasm
//
//go:embed testdata/goinwasm.wasm
var goInWasmModule []byte

// goInWasmRounds is how many times one call runs its workload, so that the cost
// of crossing into the guest is noise next to the workload's.
const goInWasmRounds = 64

// goInWasmWorkloads pairs each export of testdata/goinwasm with the native
// function it wraps.
var goInWasmWorkloads = []struct {
	name   string
	native func(n int) uint64
}{
	{"sort", goinwasm.Sort},
	{"map", goinwasm.Map},
	{"bits", goinwasm.Bits},
	{"format", goinwasm.Format},
}

// goInWasmGuest is testdata/goinwasm.wasm compiled by raw wazero (compiler
// engine, no cache, no memory cap), ready to instantiate.
type goInWasmGuest struct {
	runtime  wazero.Runtime
	compiled wazero.CompiledModule
}

// compileGoInWasm compiles testdata/goinwasm.wasm in a runtime of its own,
// closed when tb ends.
func compileGoInWasm(tb testing.TB) *goInWasmGuest {
	tb.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	tb.Cleanup(func() { r.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	compiled, err := r.CompileModule(ctx, goInWasmModule)
	if err != nil {
		tb.Fatalf("compile testdata/goinwasm.wasm: %v", err)
	}
	return &goInWasmGuest{runtime: r, compiled: compiled}
}

// instantiate makes a fresh wasip1 reactor instance of the guest, closed when
// tb ends.
func (g *goInWasmGuest) instantiate(tb testing.TB) api.Module {
	tb.Helper()
	ctx := context.Background()
	mod, err := g.runtime.InstantiateModule(ctx, g.compiled, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
	if err != nil {
		tb.Fatalf("instantiate testdata/goinwasm.wasm: %v", err)
	}
	tb.Cleanup(func() { mod.Close(ctx) })
	return mod
}

// callGoInWasm runs export fn once with n rounds and returns its checksum.
func callGoInWasm(tb testing.TB, fn api.Function, stack []uint64, n int32) uint64 {
	stack[0] = api.EncodeI32(n)
	if err := fn.CallWithStack(context.Background(), stack); err != nil {
		tb.Fatal(err)
	}
	return stack[0]
}

// TestGoInWasmAgrees runs every export of testdata/goinwasm.wasm once and
// checks that it answers the native checksum, so a stale module fails.
func TestGoInWasmAgrees(t *testing.T) {
	mod := compileGoInWasm(t).instantiate(t)
	for _, w := range goInWasmWorkloads {
		fn := mod.ExportedFunction(w.name)
		if fn == nil {
			t.Fatalf("testdata/goinwasm.wasm lacks the %s export", w.name)
		}
		if got, want := callGoInWasm(t, fn, make([]uint64, 1), 3), w.native(3); got != want {
			t.Errorf("%s: wasm checksum %#x, native %#x: rebuild testdata/goinwasm.wasm", w.name, got, want)
		}
	}
}

// BenchmarkGoInWasm times the same plain Go workloads natively and compiled to
// Wasm (run by wazero's compiler with nothing around them); one op is one call
// of goInWasmRounds rounds, and ns/round is the cost of one round.
//
// Every timed run gets a fresh instance: after some 100 garbage collections
// (about 160 calls of sort or 190 of map) the guest's collector stops
// finishing cycles and its linear memory grows without bound, which wazero's
// default allocator pays for by copying it. guest-MiB, the guest's memory at
// the end of a run, shows if a run got there.
func BenchmarkGoInWasm(b *testing.B) {
	guest := compileGoInWasm(b)
	for _, w := range goInWasmWorkloads {
		want := w.native(goInWasmRounds)
		b.Run("native/"+w.name, func(b *testing.B) {
			for b.Loop() {
				if got := w.native(goInWasmRounds); got != want {
					b.Fatalf("checksum %#x, want %#x", got, want)
				}
			}
			reportPerRound(b)
		})
		b.Run("wasm/"+w.name, func(b *testing.B) {
			mod := guest.instantiate(b)
			fn := mod.ExportedFunction(w.name)
			stack := make([]uint64, 1)
			// A few untimed calls let the guest's heap, and so its linear
			// memory, grow to their steady size first.
			for range 4 {
				callGoInWasm(b, fn, stack, goInWasmRounds)
			}
			for b.Loop() {
				if got := callGoInWasm(b, fn, stack, goInWasmRounds); got != want {
					b.Fatalf("checksum %#x, want %#x", got, want)
				}
			}
			reportPerRound(b)
			b.ReportMetric(float64(mod.Memory().Size())/(1<<20), "guest-MiB")
		})
	}
}

// reportPerRound reports the time of one workload round.
func reportPerRound(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*goInWasmRounds), "ns/round")
}
