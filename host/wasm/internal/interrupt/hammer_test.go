package interrupt

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// timedGuest mirrors the host's deadline machinery: a timer that zeroes the
// countdown and marks the call late, and a poll that fails a late call and
// otherwise rearms the countdown, both under one mutex.
type timedGuest struct {
	mod       api.Module
	spin      api.Function
	countdown api.MutableGlobal
	// iters is the guest's iteration count, the i64 at address 0 of its
	// memory. The host reads it only with atomic.LoadUint64, while the guest
	// runs: wazero's Global.Get reads a global byte by byte under the race
	// detector, and a read that straddles a carry is off by 2^16 or 2^24.
	iters *uint64

	mu    sync.Mutex
	fired bool
	// firedAt is the iteration count the timer read right after zeroing the
	// countdown.
	firedAt uint64
}

func newTimedGuest(tb testing.TB, module []byte) *timedGuest {
	tb.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	tb.Cleanup(func() { r.Close(ctx) })
	g := &timedGuest{}
	poll := api.GoModuleFunc(func(context.Context, api.Module, []uint64) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.fired {
			panic(errStopped)
		}
		g.countdown.Set(Countdown)
	})
	if _, err := r.NewHostModuleBuilder(PollModule).NewFunctionBuilder().
		WithGoModuleFunction(poll, nil, nil).Export(PollName).Instantiate(ctx); err != nil {
		tb.Fatal(err)
	}
	mod, err := r.Instantiate(ctx, module)
	if err != nil {
		tb.Fatal(err)
	}
	g.mod, g.spin = mod, mod.ExportedFunction("spin")
	g.countdown = mod.ExportedGlobal(GlobalName).(api.MutableGlobal)
	word, ok := mod.ExportedMemory("memory").Read(0, 8)
	if !ok {
		tb.Fatal("the counter module's memory has no word at address 0")
	}
	// The memory never grows, so the word stays where it is.
	if uintptr(unsafe.Pointer(&word[0]))%8 != 0 {
		tb.Fatal("the counter module's memory is not 8-byte aligned, as an atomic load needs")
	}
	g.iters = (*uint64)(unsafe.Pointer(&word[0]))
	return g
}

// count returns the guest's iteration count, read in one load.
func (g *timedGuest) count() uint64 { return atomic.LoadUint64(g.iters) }

// fire is the timer: it zeroes the countdown and marks the call late.
func (g *timedGuest) fire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.countdown.Set(0)
	g.fired = true
	g.firedAt = g.count()
}

// TestTimerRacesCheck fires the timer at every point of the guest's check,
// many times, and bounds the loop iterations a call runs once its deadline
// has passed. With a check that reads the countdown twice and tests it for
// zero, a timer write between the reads wrapped the countdown to 0xFFFFFFFF
// and the call ran about 4 billion iterations (tens of seconds) too long.
func TestTimerRacesCheck(t *testing.T) {
	module, loops, err := Instrument(counterModule())
	if err != nil || loops != 1 {
		t.Fatalf("Instrument = %d loops, %v; want 1 loop", loops, err)
	}
	g := newTimedGuest(t, module)
	const rounds = 300
	const bound = Countdown + 1
	worst := uint64(0)
	for round := range rounds {
		g.fired = false
		g.countdown.Set(Countdown)
		start := g.count()
		done := make(chan error, 1)
		go func() {
			_, err := g.spin.Call(context.Background())
			done <- err
		}()
		// Let the guest run a varying number of iterations, so that the timer
		// lands at every instruction of the check over the rounds.
		for g.count()-start < uint64(1000+round*37) {
		}
		g.fire()
		// Fail as soon as the bound is passed rather than wait for a wrapped
		// countdown to run out.
		for err := error(nil); ; {
			select {
			case err = <-done:
			default:
				if over := g.count() - g.firedAt; over > bound {
					t.Fatalf("round %d: the call is %d iterations past its deadline and still running, want at most %d", round, over, bound)
				}
				continue
			}
			if !errors.Is(err, errStopped) {
				t.Fatalf("round %d: spin error = %v, want %v", round, err, errStopped)
			}
			break
		}
		worst = max(worst, g.count()-g.firedAt)
	}
	t.Logf("worst overrun in %d rounds: %d iterations (bound %d)", rounds, worst, bound)
	if worst > bound {
		t.Fatalf("a call ran %d iterations past its deadline, want at most %d", worst, bound)
	}
}
