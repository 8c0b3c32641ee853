package policytest

import (
	"context"
	"testing"
	"time"

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

// IdleTimes are the idle work Idle recorded: its wall time and the CPU time
// of the calling thread (its own work, which a loaded machine does not
// inflate).
type IdleTimes struct {
	Wall, CPU Latencies
}

// Idle runs t's idle work if t is an Idler and mode is IdleModes' first,
// and records the time it took (nothing when it had none to do). Call it
// with the goroutine locked to its thread.
func (it *IdleTimes) Idle(tb testing.TB, t abi.Transport, mode string) {
	i, ok := t.(Idler)
	if !ok || mode != IdleModes[0] {
		return
	}
	start, cpu := time.Now(), ThreadCPU(tb)
	ran, err := i.Idle(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if ran {
		it.Wall, it.CPU = append(it.Wall, time.Since(start)), append(it.CPU, ThreadCPU(tb)-cpu)
	}
}

// Report reports the idle work, if any, as "idle-" and "idle-cpu-" p50,
// p99 and max: the longest is what a call arriving during it waits at most.
func (it *IdleTimes) Report(b *testing.B) {
	for _, l := range []struct {
		prefix string
		l      Latencies
	}{{"idle-", it.Wall}, {"idle-cpu-", it.CPU}} {
		if len(l.l) == 0 {
			continue
		}
		l.l.Report(b, l.prefix)
		b.ReportMetric(float64(l.l.Percentile(1).Nanoseconds()), l.prefix+"max-ns")
	}
}
