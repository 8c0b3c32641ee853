package interrupt

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"runtime"
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
	poll    *poller
}

// newGuest instantiates module under config as a wasip1 reactor.
func newGuest(tb testing.TB, config wazero.RuntimeConfig, module []byte) *guest {
	tb.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, config)
	tb.Cleanup(func() { r.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	poll := providePoll(tb, r)
	compiled, err := r.CompileModule(ctx, module)
	if err != nil {
		tb.Fatalf("compile: %v", err)
	}
	mod, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		tb.Fatalf("instantiate: %v", err)
	}
	return &guest{runtime: r, mod: mod, spin: mod.ExportedFunction("spin"), poll: poll}
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
		countdown, ok := g.mod.ExportedGlobal(GlobalName).(api.MutableGlobal)
		if !ok {
			t.Fatalf("mutable global %s not exported", GlobalName)
		}
		if v := countdown.Get(); v == 0 || v > Countdown {
			t.Fatalf("countdown = %d after _initialize, want in (0, %d]", v, Countdown)
		}
		got, err := g.call(ctx, 1000)
		if err != nil || got != want {
			t.Fatalf("spin(1000) = %d, %v; want %d", got, err, want)
		}
		res, err := g.mod.ExportedFunction("add").Call(ctx, api.EncodeI32(2), api.EncodeI32(40))
		if err != nil || api.DecodeI32(res[0]) != 42 {
			t.Fatalf("add(2, 40) = %v, %v; want 42", res, err)
		}
		wantLong, _ := plain.call(ctx, 3*Countdown)
		polls := g.poll.polls.Load()
		if got, err := g.call(ctx, 3*Countdown); err != nil || got != wantLong {
			t.Fatalf("spin(%d) = %d, %v; want %d", 3*Countdown, got, err, wantLong)
		}
		if n := g.poll.polls.Load() - polls; n < 2 || n > 4 {
			t.Fatalf("spin(%d) polled %d times, want 2 to 4", 3*Countdown, n)
		}
	})

	t.Run("interrupt endless loop", func(t *testing.T) {
		g := newGuest(t, wazero.NewRuntimeConfigCompiler(), out)
		done := make(chan error, 1)
		go func() {
			_, err := g.call(ctx, -1)
			done <- err
		}()
		// Wait until the guest spins: its first poll is the signal.
		polls := g.poll.polls.Load()
		for g.poll.polls.Load() == polls {
			runtime.Gosched()
		}
		// The spinning goroutine polls, so a stop-the-world pause gets it.
		gc := make(chan struct{})
		go func() { runtime.GC(); close(gc) }()
		select {
		case <-gc:
		case <-time.After(10 * time.Second):
			t.Fatal("garbage collection blocked by the spinning guest")
		}
		// The next poll (at most Countdown iterations away) stops the loop. The
		// countdown is not zeroed from here: only the poll, which runs on the
		// spinning goroutine, writes it in this test.
		g.poll.stop.Store(true)
		select {
		case err := <-done:
			if !errors.Is(err, errStopped) {
				t.Fatalf("spin(-1) error = %v, want %v", err, errStopped)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("spin(-1) still running 10s after the poll function was told to stop")
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
	if !errors.Is(err, errImportExists) {
		t.Fatalf("error = %v, want %v", err, errImportExists)
	}
}
