package cli

import (
	"bytes"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
)

// TestCheckEndsOnSIGTERM runs check on modules that loop forever in each
// entry point of start-up and sends the process SIGTERM once the module is
// compiled (its "policy code ready" line), so that the signal finds it in
// its loop: check must end with the cancellation, long before the start-up
// limit (5 s) would stop it. (A signal during the compile ends check too,
// with wazero's "terminated signal received"; that is not what this tests.)
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
			stderr := newWatchedWriter("policy code ready")
			done := make(chan int, 1)
			go func() {
				var stdout bytes.Buffer
				done <- Execute([]string{"check", "--policy", path, "--sysfs", sysfs, "--cache-dir", "", "--policy-log", "info"}, &stdout, stderr)
			}()
			select {
			case <-stderr.seen:
			case code := <-done:
				t.Fatalf("check exited %d before its policy code was ready: %s", code, stderr)
			}
			if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := <-done; code == 0 || !strings.Contains(stderr.String(), "context canceled") {
				t.Fatalf("check exited %d: %s; want a failure from the cancellation", code, stderr)
			}
		})
	}
}

// watchedWriter is an io.Writer that keeps what is written and closes seen
// once it holds want.
type watchedWriter struct {
	want string
	seen chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
}

func newWatchedWriter(want string) *watchedWriter {
	return &watchedWriter{want: want, seen: make(chan struct{})}
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := bytes.Contains(w.buf.Bytes(), []byte(w.want))
	w.buf.Write(p)
	if !had && bytes.Contains(w.buf.Bytes(), []byte(w.want)) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watchedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
