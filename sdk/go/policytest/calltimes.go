package policytest

import (
	"runtime"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// AgentClient returns the client a benchmark times calls through: it reads
// answers as the nriwasm agent does (abi.KeepGroups: grouped updates checked,
// not expanded; the agent expands them only for NRI), so a timed call costs
// the host what it costs the agent. Count what an answer updates with
// abi.CountContainers. Checks that look at updates one by one keep a
// Runtime's expanding Client.
func AgentClient(t abi.Transport) *abi.Client { return abi.NewClient(t, abi.KeepGroups()) }

// CallTimes are a benchmark's timed calls: the wall-clock time of each and
// the calling thread's CPU time (the call's own work, which a loaded machine
// does not inflate). Time calls between StartTiming and its stop.
type CallTimes struct {
	Wall, CPU Latencies
}

// Time runs call and records its wall-clock and thread-CPU time; it returns
// the call's error.
func (c *CallTimes) Time(tb testing.TB, call func() error) error {
	start, cpu := time.Now(), ThreadCPU(tb)
	err := call()
	c.Wall, c.CPU = append(c.Wall, time.Since(start)), append(c.CPU, ThreadCPU(tb)-cpu)
	return err
}

// Report reports the wall-clock p50 and p99 as "<prefix>p50-ns" and
// "<prefix>p99-ns", the thread-CPU ones as "<prefix>cpu-p50-ns" and
// "<prefix>cpu-p99-ns", and the slowest call's CPU time as
// "<prefix>cpu-max-ns".
func (c *CallTimes) Report(b *testing.B, prefix string) {
	c.Wall.Report(b, prefix)
	c.CPU.Report(b, prefix+"cpu-")
	b.ReportMetric(float64(c.CPU.Percentile(1).Nanoseconds()), prefix+"cpu-max-ns")
}

// StartTiming readies b for timed calls through t: the goroutine is locked
// to its thread (so ThreadCPU is the calls' own), the set-up's garbage is
// collected by one idle step in mode (as an agent's after its start: the
// timed idle work is then the calls' own), allocations are reported and the
// timer reset. Call the returned stop when the timed calls are done.
func StartTiming(b *testing.B, t abi.Transport, mode string) (stop func()) {
	runtime.LockOSThread()
	(&IdleTimes{}).Idle(b, t, mode)
	b.ReportAllocs()
	b.ResetTimer()
	return runtime.UnlockOSThread
}
