package builtin

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// release drops the whole pages of s, read-only data of the executable (a
// private file mapping, never written), from this process's page tables
// (MADV_DONTNEED): pages read again come back from the page cache. Not
// MADV_PAGEOUT, which also evicts them from the page cache: the next start of
// the agent then read the module from disk again, ~16 ms more of every warm
// start here (docs/performance.md, "Start").
func release(s string) {
	page := uintptr(os.Getpagesize())
	p := unsafe.Pointer(unsafe.StringData(s))
	skip := (page - uintptr(p)%page) % page // to the first whole page
	if uintptr(len(s)) <= skip {
		return
	}
	n := (uintptr(len(s)) - skip) &^ (page - 1)
	if n == 0 {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, skip)), n), unix.MADV_DONTNEED)
}
