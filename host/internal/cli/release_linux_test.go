package cli

import (
	"os"
	"testing"
)

// exeResident is how much of the test binary's read-only mappings is
// resident, from /proc/self/smaps.
func exeResident(t *testing.T) int64 {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	maps, err := releasable(f, exe)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, m := range maps {
		n += m.rss
	}
	return n
}

func TestReleaseExecutable(t *testing.T) {
	before := exeResident(t)
	n, err := releaseExecutable()
	if err != nil {
		t.Fatal(err)
	}
	after := exeResident(t)
	t.Logf("resident read-only pages of the test binary: %d KiB before, %d KiB released, %d KiB after", before>>10, n>>10, after>>10)
	if n < before/2 {
		t.Errorf("released %d KiB of %d KiB resident", n>>10, before>>10)
	}
	// What the test ran since is mapped again: far less than before.
	if after > before/2 {
		t.Errorf("%d KiB resident after the release, %d KiB before", after>>10, before>>10)
	}
}
