package interrupt

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"runtime/debug"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// spinWasm is a Go wasip1 reactor exporting spin and add, built from
// testdata/spin/main.go. Rebuild it from this directory with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o testdata/spin.wasm ./testdata/spin
//
//go:embed testdata/spin.wasm
var spinWasm []byte

// guest is an instantiated copy of the spin fixture.
type guest struct {
	runtime wazero.Runtime
	mod     api.Module
	spin    api.Function
}

// newGuest instantiates module under config as a wasip1 reactor.
func newGuest(tb testing.TB, config wazero.RuntimeConfig, module []byte) *guest {
	tb.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, config)
	tb.Cleanup(func() { r.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	compiled, err := r.CompileModule(ctx, module)
	if err != nil {
		tb.Fatalf("compile: %v", err)
	}
	mod, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		tb.Fatalf("instantiate: %v", err)
	}
	return &guest{runtime: r, mod: mod, spin: mod.ExportedFunction("spin")}
}

// call runs spin(n) and returns its result.
func (g *guest) call(ctx context.Context, n int32) (int32, error) {
	res, err := g.spin.Call(ctx, api.EncodeI32(n))
	if err != nil {
		return 0, err
	}
	return api.DecodeI32(res[0]), nil
}

func instrumentFixture(tb testing.TB) []byte {
	tb.Helper()
	out, loops, err := Instrument(spinWasm)
	if err != nil {
		tb.Fatal(err)
	}
	if loops == 0 {
		tb.Fatal("no loop instrumented in the Go guest")
	}
	return out
}

func TestFixtureSize(t *testing.T) {
	if len(spinWasm) > 3<<20 {
		t.Fatalf("testdata/spin.wasm is %d bytes, want < 3 MiB", len(spinWasm))
	}
}

func TestGoGuest(t *testing.T) {
	ctx := context.Background()
	out := instrumentFixture(t)

	plain := newGuest(t, wazero.NewRuntimeConfigCompiler(), spinWasm)
	want, err := plain.call(ctx, 1000)
	if err != nil {
		t.Fatalf("plain spin(1000): %v", err)
	}

	t.Run("result unchanged", func(t *testing.T) {
		g := newGuest(t, wazero.NewRuntimeConfigCompiler(), out)
		flag := g.mod.ExportedGlobal(GlobalName)
		if flag == nil {
			t.Fatalf("global %s not exported", GlobalName)
		}
		if flag.Get() != 0 {
			t.Fatalf("flag = %d, want 0", flag.Get())
		}
		got, err := g.call(ctx, 1000)
		if err != nil || got != want {
			t.Fatalf("spin(1000) = %d, %v; want %d", got, err, want)
		}
		res, err := g.mod.ExportedFunction("add").Call(ctx, api.EncodeI32(2), api.EncodeI32(40))
		if err != nil || api.DecodeI32(res[0]) != 42 {
			t.Fatalf("add(2, 40) = %v, %v; want 42", res, err)
		}
	})

	t.Run("interrupt endless loop", func(t *testing.T) {
		// A stop-the-world pause cannot preempt a goroutine spinning in Wasm (the
		// reason host/wasm does not use this rewrite by default yet): keep the
		// collector off while the loop spins, so this test checks the rewrite alone.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		g := newGuest(t, wazero.NewRuntimeConfigCompiler(), out)
		done := make(chan error, 1)
		go func() {
			_, err := g.call(ctx, -1)
			done <- err
		}()
		time.Sleep(50 * time.Millisecond)
		g.mod.ExportedGlobal(GlobalName).(api.MutableGlobal).Set(1)
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("spin(-1) returned without error after the flag was set")
			}
			t.Logf("spin(-1) stopped: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("spin(-1) still running 10s after the flag was set")
		}
	})
}

func TestInstrumentDeterministic(t *testing.T) {
	first, loopsA, errA := Instrument(spinWasm)
	second, loopsB, errB := Instrument(bytes.Clone(spinWasm))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if !bytes.Equal(first, second) || loopsA != loopsB {
		t.Fatal("two runs on the same input differ")
	}
}

func TestInstrumentTwice(t *testing.T) {
	_, _, err := Instrument(instrumentFixture(t))
	if !errors.Is(err, errExportExists) {
		t.Fatalf("error = %v, want %v", err, errExportExists)
	}
}
