package resmgr_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
)

// TestUnwritableStateDirectory: when the checkpoint cannot be written (here
// the state directory lies under a regular file, as unwritable to root as a
// read-only mount), readiness fails naming it and
// nriwasm_checkpoint_save_failing is 1.
func TestUnwritableStateDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Policy.Name = "conformance"
	cfg.StateDir = filepath.Join(file, "state")
	met := metrics.New()
	m, err := resmgr.New(context.Background(), cfg, testTopology(), newFake(nil).load, resmgr.WithNodeName("node-1"), resmgr.WithMetrics(met))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Synchronize(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	pod, c := container("c", "4-5")
	if _, _, err := m.CreateContainer(context.Background(), pod, c); err != nil {
		t.Fatal(err)
	}
	// The save runs in the background after a change; wait for its outcome.
	deadline := time.Now().Add(10 * time.Second)
	for m.Ready() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := m.Ready(); err == nil || !strings.Contains(err.Error(), "checkpoint cannot be saved (state directory "+cfg.StateDir) {
		t.Fatalf("Ready = %v, want the failing checkpoint", err)
	}
	want := "# HELP nriwasm_checkpoint_save_failing 1 while the last attempt to write the checkpoint failed (a read-only or full state directory): a restart would lose what changed since.\n# TYPE nriwasm_checkpoint_save_failing gauge\nnriwasm_checkpoint_save_failing 1\n"
	if err := testutil.GatherAndCompare(met.Registry, strings.NewReader(want), "nriwasm_checkpoint_save_failing"); err != nil {
		t.Fatal(err)
	}
}
