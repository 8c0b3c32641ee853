//go:build !wasip1

package policytest

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

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
