package wasm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/nriwasm/nriwasm/host/wasm/internal/interrupt"
)

// errPastDeadline is what the poll import panics with once the call is past
// its deadline; wazero returns it, wrapped, as the call's error.
var errPastDeadline = errors.New("deadline passed (interrupt poll)")

// With InterruptInstrumented, every loop iteration of the guest decrements a
// countdown global and calls the poll import when it reads zero, so a runaway
// loop returns to Go every interrupt.Countdown iterations (a point where the
// runtime can preempt it, e.g. for a garbage collection). The poll fails the
// call once the deadline timer has fired, and the timer zeroes the countdown
// so that the guest polls at its next iteration. Compiled guest code reads
// the countdown as a machine word; wazero's interpreter reads it as a Go
// variable, which the timer's goroutine must not write while a call runs (a
// data race, which the race detector shows). Interpreted, the timer only
// marks the deadline, and the call fails at the guest's next regular poll, at
// most interrupt.Countdown loop iterations later.

// watch registers in with its compiled module for the poll import and sets up
// the deadline timer. It runs before any guest code.
func (in *instance) watch(c *compiled) error {
	g, ok := in.mod.ExportedGlobal(interrupt.GlobalName).(api.MutableGlobal)
	if !ok {
		return fmt.Errorf("policy %q: instrumented module lacks the mutable global %q", in.name, interrupt.GlobalName)
	}
	in.compiled, in.countdown = c, g
	interpreted := c.source == codeInterpreted
	in.timer = time.AfterFunc(time.Hour, func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		if !interpreted {
			in.countdown.Set(0)
		}
		in.fired.Store(true)
	})
	in.timer.Stop()
	c.instances.Store(in.mod, in)
	return nil
}

// unwatch undoes watch.
func (in *instance) unwatch() {
	if in.timer != nil {
		in.timer.Stop()
	}
	if in.compiled != nil {
		in.compiled.instances.Delete(in.mod)
	}
}

// poll implements the poll import for the modules of c. It fails the call
// once its context is done: this bounds start-up (the start function and
// _initialize run before the instance is watched) and lets a cancelled
// context (SIGTERM in the CLI) stop any call. A watched instance then checks
// its own timer; a module not watched yet only rearms its countdown.
func (c *compiled) poll(ctx context.Context, mod api.Module, _ []uint64) {
	if err := ctx.Err(); err != nil {
		panic(fmt.Errorf("%w: %w", errPastDeadline, err))
	}
	if v, ok := c.instances.Load(mod); ok {
		v.(*instance).poll()
		return
	}
	if g, ok := mod.ExportedGlobal(interrupt.GlobalName).(api.MutableGlobal); ok {
		g.Set(interrupt.Countdown)
	}
}

// poll fails the current call if it is past its deadline, and otherwise
// rearms the countdown.
func (in *instance) poll() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.fired.Load() {
		panic(errPastDeadline)
	}
	in.countdown.Set(interrupt.Countdown)
}

// invoke calls f with in.stack under a deadline.
func (in *instance) invoke(ctx context.Context, f api.Function, timeout time.Duration) error {
	switch in.opts.interrupt {
	case InterruptWazero:
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return f.CallWithStack(cctx, in.stack)
	case InterruptInstrumented:
		in.timer.Reset(timeout)
		err := f.CallWithStack(ctx, in.stack)
		if !in.timer.Stop() {
			// The timer fired, or is firing: wait for its function to finish,
			// then rearm the countdown if the call made it in time.
			for !in.fired.Load() {
				time.Sleep(time.Microsecond)
			}
			if err == nil {
				in.countdown.Set(interrupt.Countdown)
				in.fired.Store(false)
			}
		}
		return err
	default:
		return f.CallWithStack(ctx, in.stack)
	}
}

// classify names why a call failed.
func (in *instance) classify(err error, output string) error {
	switch {
	case in.fired.Load(), errors.Is(err, errPastDeadline), errors.Is(err, context.DeadlineExceeded):
		return ErrDeadline
	case strings.Contains(output, "out of memory"):
		return ErrOutOfMemory
	}
	if exit, ok := errors.AsType[*sys.ExitError](err); ok {
		if exit.ExitCode() == sys.ExitCodeDeadlineExceeded || exit.ExitCode() == sys.ExitCodeContextCanceled {
			return ErrDeadline
		}
		return ErrExit
	}
	return ErrTrap
}
