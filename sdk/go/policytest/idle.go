package policytest

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Idler is a transport with work to do between calls: host/wasm's Policy,
// whose Idle runs a Go guest's garbage collection (the optional
// nriwasm_idle export) once no call is waiting.
type Idler interface {
	Idle(ctx context.Context) (ran bool, err error)
}

// IdleModes are the two ways a benchmark drives a transport that is an
// Idler: "" lets it do its idle work after each timed operation, untimed
// (the agent between decisions); "-busy" never does, as back-to-back calls
// of an agent that is never idle.
var IdleModes = []string{"", "-busy"}

// Idle runs t's idle work if t is an Idler and mode is IdleModes' first,
// and records the time it took in l (nothing when it had none to do).
func Idle(tb testing.TB, t abi.Transport, mode string, l *Latencies) {
	i, ok := t.(Idler)
	if !ok || mode != IdleModes[0] {
		return
	}
	start := time.Now()
	ran, err := i.Idle(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if ran {
		*l = append(*l, time.Since(start))
	}
}

// ReportIdle reports the idle work Idle recorded, if any, as "idle-p50-ns",
// "idle-p99-ns" and "idle-max-ns": the longest is what a call arriving
// during it waits at most.
func ReportIdle(b *testing.B, l Latencies) {
	if len(l) == 0 {
		return
	}
	l.Report(b, "idle-")
	b.ReportMetric(float64(l.Percentile(1).Nanoseconds()), "idle-max-ns")
}

// ThreadCPU is the CPU time the calling thread has used: around a call
// made with the goroutine locked to its thread (runtime.LockOSThread), the
// call's own work, which a loaded machine does not inflate.
func ThreadCPU(tb testing.TB) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ts.Nano())
}
