package resmgr_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/state"
)

// TestSaverKeepsNoBufferBetweenBursts: once a burst of changes is saved and
// no change is pending, the saver no longer holds the encoded journal (with
// 1,000 containers ~2 MB of the agent's heap for as long as it runs).
func TestSaverKeepsNoBufferBetweenBursts(t *testing.T) {
	cfg := config.Default()
	cfg.Policy.Name = "conformance"
	cfg.StateDir = t.TempDir()
	ctx := context.Background()
	m, err := resmgr.New(ctx, cfg, testTopology(), newFake(nil).load, resmgr.WithNodeName("node-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := range n {
		pod, c := container(fmt.Sprintf("c%d", i), "4-5")
		if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
			t.Fatal(err)
		}
	}
	// The save runs in the background after the burst; wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for saved(t, cfg.StateDir) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the checkpoint holds %d containers 10 s after %d were created", saved(t, cfg.StateDir), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A change the last save did not cover kicks one more save, which finds
	// nothing new: the buffer goes at the latest then.
	for c := resmgr.SaveBufferCap(m); c != 0; c = resmgr.SaveBufferCap(m) {
		if time.Now().After(deadline) {
			t.Fatalf("after the burst was saved the saver keeps a %d-byte buffer", c)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// saved is how many containers the checkpoint in dir holds (0 before the
// first save).
func saved(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, state.FileName))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	j, err := state.Unmarshal(b)
	if err != nil {
		return 0 // a save replacing it
	}
	return j.Counts().Containers
}
