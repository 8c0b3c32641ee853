package policytest

import (
	"testing"
	"time"
	"unsafe"
)

// clockThreadCPUTime is WASI's CLOCKID_THREAD_CPUTIME_ID.
const clockThreadCPUTime = 3

//go:wasmimport wasi_snapshot_preview1 clock_time_get
func clockTimeGet(id uint32, precision uint64, time unsafe.Pointer) uint32

// ThreadCPU is the CPU time the calling thread has used, from the WASI
// runtime's thread CPU clock, when the tests themselves run as Wasm; a
// runtime without that clock fails the test.
func ThreadCPU(tb testing.TB) time.Duration {
	var ns uint64
	if errno := clockTimeGet(clockThreadCPUTime, 1, unsafe.Pointer(&ns)); errno != 0 {
		tb.Fatalf("the WASI thread CPU clock: errno %d", errno)
	}
	return time.Duration(ns)
}
