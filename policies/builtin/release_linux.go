package builtin

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// release asks the kernel to reclaim the whole pages of s, read-only data of
// the executable (a private file mapping, never written: reclaimed pages are
// read from the file again if s is read again). A kernel without
// MADV_PAGEOUT (before 5.4) refuses it, which only leaves the pages resident.
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
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, skip)), n), unix.MADV_PAGEOUT)
}
