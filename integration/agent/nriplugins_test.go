//go:build integration && nriplugins

package agent_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nriwasm/nriwasm/integration/containerd"
)

// nriPluginsConfig is nri-plugins' topology-aware configuration for
// --config-file (its sample-configs/topologyaware-config.yaml, trimmed): no
// CRD, no API server.
const nriPluginsConfig = `apiVersion: config.nri/v1alpha1
kind: TopologyAwarePolicy
metadata:
  name: default
spec:
  pinCPU: true
  pinMemory: true
  reservedResources:
    cpu: 750m
`

// nriPluginsReady is what nri-plugins logs when the runtime's first
// Synchronize reaches it (pkg/resmgr/nri.go): registered and synchronizing.
const nriPluginsReady = "synchronizing cache state with NRI runtime"

// lockedBuffer is the plugin's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNRIPluginsSideBySide measures, without asserting, nri-plugins' own
// topology-aware agent next to ours against the same containerd in one run:
// start to ready (ours: exec to /readyz; theirs: exec to the first
// Synchronize reaching it) and RSS 5 s after ready, then 5 s after 2
// containers were placed. The binary is $NRIWASM_INTEGRATION_BIN's
// nri-resource-policy-topology-aware (make nri-plugins-deps).
func TestNRIPluginsSideBySide(t *testing.T) {
	bin := filepath.Join(os.Getenv("NRIWASM_INTEGRATION_BIN"), "nri-resource-policy-topology-aware")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("nri-plugins' agent: %v (make nri-plugins-deps builds it)", err)
	}
	e := newEnv(t, "")
	// Ours, warm: once the first (cold) start has moved to compiled code
	// (in the cache), stop it and start again.
	waitCompiled(t, e)
	e.a.Stop(t)
	e.a.Restart(t)
	t.Logf("FIGURE nriwasm start to ready (warm cache): %v", e.a.ReadyAfter)
	time.Sleep(steadyAfter)
	logRSS(t, e.a, "nriwasm, 5 s after ready")
	e.run(t, burstable)
	e.run(t, bestEffort)
	time.Sleep(steadyAfter)
	logRSS(t, e.a, "nriwasm, 5 s after 2 containers were placed")
	e.remove(t, burstable)
	e.remove(t, bestEffort)
	e.a.Stop(t)

	// Theirs, on the same containerd. It bind-mounts a directory of its
	// state into every container, with rslave propagation, which runc refuses
	// unless the state directory is on a shared mount (its chart mounts a
	// host path): make it one.
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(state, state, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind-mounting nri-plugins' state directory: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(state, unix.MNT_DETACH); err != nil {
			t.Errorf("unmounting nri-plugins' state directory: %v", err)
		}
	})
	if err := unix.Mount("", state, "", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		t.Fatalf("making nri-plugins' state directory a shared mount: %v", err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(nriPluginsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	cmd := exec.Command(bin, "--config-file", cfg, "--nri-socket", e.c.NRISocket,
		"--state-dir", state, "--pid-file", filepath.Join(dir, "pid"))
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), "NODE_NAME=nriwasm-it")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("nri-plugins' output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.String(), nriPluginsReady) {
		if time.Now().After(deadline) {
			t.Fatalf("nri-plugins' agent did not synchronize within 2 minutes; its output:\n%s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("FIGURE nri-plugins start to ready (first Synchronize): %v", time.Since(start))
	time.Sleep(steadyAfter)
	logMemory(t, cmd.Process.Pid, "nri-plugins RSS 5 s after ready")
	e.run(t, burstable2)
	e.run(t, workload{pod: "besteffort2", qos: containerd.BestEffort})
	time.Sleep(steadyAfter)
	logMemory(t, cmd.Process.Pid, "nri-plugins RSS 5 s after 2 containers were placed")
}
