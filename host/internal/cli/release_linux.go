package cli

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// releaseExecutable drops from this process's page tables the resident pages
// of the executable's read-only mappings (code, read-only data, Go's function
// tables) and returns how many bytes were resident. Most of them were touched
// once, by the package initialization of every linked library (client-go
// registers every API group) and the start; a page the agent reads again is
// mapped again from the page cache (a minor fault), or read from the file.
// MADV_DONTNEED on a private file mapping with no private copies loses
// nothing (releasable checks there are none).
func releaseExecutable() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("releasing the executable's pages: %w", err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("releasing the executable's pages: %w", err)
	}
	defer f.Close()
	maps, err := releasable(f, exe)
	if err != nil {
		return 0, fmt.Errorf("releasing the executable's pages: %w", err)
	}
	var n int64
	for _, m := range maps {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.lo, m.hi-m.lo, unix.MADV_DONTNEED); errno != 0 {
			return n, fmt.Errorf("releasing the executable's pages: madvise %#x-%#x: %w", m.lo, m.hi, errno)
		}
		n += m.rss
	}
	return n, nil
}
