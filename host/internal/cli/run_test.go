package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

func TestRunFlagsOverride(t *testing.T) {
	wd, _ := os.Getwd()
	tests := []struct {
		name    string
		flags   runFlags
		check   func(t *testing.T, f runFlags)
		wantErr string
	}{
		{"defaults", runFlags{}, func(t *testing.T, f runFlags) {
			cfg, _ := f.load()
			want(t, cfg.Policy.Name, "topology-aware")
			want(t, cfg.Policy.CacheDir, "/var/lib/nriwasm/cache")
		}, ""},
		{"paths are made absolute; the caches and the record follow the state", runFlags{stateDir: "state", nriSocket: "nri.sock", sysfs: "sys", policy: "p.wasm"}, func(t *testing.T, f runFlags) {
			cfg, _ := f.load()
			want(t, cfg.StateDir, filepath.Join(wd, "state"))
			want(t, cfg.Policy.CacheDir, filepath.Join(wd, "state", "cache"))
			want(t, cfg.Registry.CacheDir, filepath.Join(wd, "state", "oci"))
			want(t, cfg.Record.Dir, filepath.Join(wd, "state", "record"))
			want(t, cfg.NRI.SocketPath, filepath.Join(wd, "nri.sock"))
			want(t, cfg.Sysfs, filepath.Join(wd, "sys"))
			want(t, cfg.Policy.Name, filepath.Join(wd, "p.wasm"))
		}, ""},
		{"invalid address names the field", runFlags{metricsAddress: "no port"}, nil, "metrics.address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.flags.load()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, tt.flags)
		})
	}
}

func want[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestRunServesProbesAndReloads runs the agent with no runtime to talk to: it
// keeps trying to connect, serves /healthz but not /readyz, refuses config
// changes it cannot apply, and stops cleanly when its context ends.
func TestRunServesProbesAndReloads(t *testing.T) {
	a := newTestAgent(t)
	a.write("", "")
	a.start()
	testkit.Eventually(t, "healthz", func() bool { return get(a.addr, "/healthz") == http.StatusOK })
	want(t, get(a.addr, "/readyz"), http.StatusServiceUnavailable)
	a.write(", config: reject", "") // the conformance policy finds this configuration invalid
	testkit.Eventually(t, "invalid reload", func() bool {
		return strings.Contains(metricsText(a.addr), `nriwasm_config_reloads_total{result="invalid"} 1`)
	})
	if err := os.WriteFile(a.conf, []byte(strings.Replace(readFile(t, a.conf), "nri: {", "nri: {pluginName: other, ", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "restart-required reload", func() bool {
		return strings.Contains(metricsText(a.addr), `nriwasm_config_reloads_total{result="restart_required"} 1`)
	})
	a.stop()
	if !strings.Contains(a.logs.String(), "restart required to change nri.pluginName") {
		t.Errorf("the refusal is not logged:\n%s", a.logs.String())
	}
}

// testAgent is the agent (runAgent) run in the background from a
// configuration file, with no runtime to talk to, on a captured VM's sysfs.
type testAgent struct {
	t                     *testing.T
	dir, sock, conf, addr string
	sysfs                 string
	logs                  syncBuffer
	cancel                context.CancelFunc
	done                  chan error
}

func newTestAgent(t *testing.T) *testAgent {
	t.Helper()
	sock, err := os.MkdirTemp("", "nriwasm-run-") // short: a socket path has at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	dir := t.TempDir()
	return &testAgent{t: t, dir: dir, sock: sock, conf: filepath.Join(dir, "config.yaml"), addr: freeAddress(t), sysfs: capturedVM(t)}
}

// write writes the configuration file: the conformance policy with the
// shared compiled-code cache and policy's further fields (", config: x"),
// then extra top-level lines.
func (a *testAgent) write(policy, extra string) {
	a.t.Helper()
	text := fmt.Sprintf("policy: {name: conformance, cacheDir: %s%s}\nnri: {socketPath: %s}\nsysfs: %s\nstateDir: %s\nmetrics: {address: %q}\n%s",
		cacheDir, policy, filepath.Join(a.sock, "nri.sock"), a.sysfs, filepath.Join(a.dir, "state"), a.addr, extra)
	if err := os.WriteFile(a.conf, []byte(text), 0o600); err != nil {
		a.t.Fatal(err)
	}
}

// start runs the agent until stop.
func (a *testAgent) start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel, a.done = cancel, make(chan error, 1)
	go func() { a.done <- runAgent(ctx, &a.logs, runFlags{config: a.conf}) }()
}

// stop ends the agent's context and fails the test if it did not stop
// cleanly.
func (a *testAgent) stop() {
	a.t.Helper()
	a.cancel()
	if err := <-a.done; err != nil {
		a.t.Fatalf("runAgent: %v\n%s", err, a.logs.String())
	}
}

func freeAddress(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func get(addr, path string) int {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func metricsText(addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// syncBuffer is a bytes.Buffer safe for the agent's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunWithoutClusterAccessLeavesDRAOff: a policy configuration that asks
// for DRA devices turns DRA on (dra.enabled unset); with no kubeconfig and no
// service account the agent warns and runs on without DRA.
func TestRunWithoutClusterAccessLeavesDRAOff(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	a := newTestAgent(t)
	a.write(", config: dra", fmt.Sprintf("dra: {cdiDir: %s}\n", filepath.Join(a.dir, "cdi")))
	a.start()
	testkit.Eventually(t, "healthz", func() bool { return get(a.addr, "/healthz") == http.StatusOK })
	a.stop()
	if logs := a.logs.String(); !strings.Contains(logs, "no cluster access; running with DRA off") || !strings.Contains(logs, "driver=conformance.nri.io") {
		t.Errorf("no warning naming the driver:\n%s", logs)
	}
}
