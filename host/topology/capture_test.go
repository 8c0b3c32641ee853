package topology_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// capturedVM is a subset of a real VM's /sys (see its README.md).
const capturedVM = "testdata/captured-vm"

// TestCaptureVM refreshes testdata/captured-vm from this machine's /sys. It
// runs only on request, on a small VM (at most topologytest.MaxCaptureFiles
// files):
//
//	TOPOLOGY_CAPTURE=1 go test ./host/topology -run TestCaptureVM
//
// Regular files land in captured-vm/sys, where their links resolve; the
// links themselves are listed in captured-vm/symlinks.txt and recreated by
// topologytest.Restore. Update the facts TestCapturedVM checks, and the
// README, by hand afterwards.
func TestCaptureVM(t *testing.T) {
	if os.Getenv("TOPOLOGY_CAPTURE") != "1" {
		t.Skip("set TOPOLOGY_CAPTURE=1 to recapture testdata/captured-vm from /sys")
	}
	if err := os.RemoveAll(filepath.Join(capturedVM, "sys")); err != nil {
		t.Fatal(err)
	}
	if err := topologytest.Capture("/sys", capturedVM); err != nil {
		t.Fatal(err)
	}
}
