package cli

import (
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
)

// TestCheckEndsOnSIGTERM runs check on modules that loop forever in each
// entry point of start-up and sends the process SIGTERM: check must end with
// the cancellation, long before the start-up limit (5 s) would stop it.
func TestCheckEndsOnSIGTERM(t *testing.T) {
	sysfs := t.TempDir()
	if err := topologytest.Restore(filepath.Join("..", "..", "topology", "testdata", "captured-vm"), sysfs); err != nil {
		t.Fatal(err)
	}
	// A handler of our own keeps SIGTERM from ending the test binary whatever
	// the moment it arrives.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM)
	defer signal.Stop(sigs)
	for _, entry := range []string{wasmtest.EntryStart, wasmtest.EntryInitialize, wasmtest.EntryVersion} {
		t.Run(entry, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "looping.wasm")
			if err := os.WriteFile(path, wasmtest.LoopingModule(entry), 0o600); err != nil {
				t.Fatal(err)
			}
			type result struct {
				errOut string
				code   int
			}
			done := make(chan result, 1)
			go func() {
				_, errOut, code := run(t, "check", "--policy", path, "--sysfs", sysfs, "--cache-dir", "")
				done <- result{errOut, code}
			}()
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case r := <-done:
					if r.code == 0 || !strings.Contains(r.errOut, "context canceled") {
						t.Fatalf("check exited %d: %s; want a failure from the cancellation", r.code, r.errOut)
					}
					return
				case <-tick.C:
					if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}
