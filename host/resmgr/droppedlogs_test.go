package resmgr_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// droppingFake is a fakePolicy that also reports dropped log messages, as
// *wasm.Policy does when a policy logs over its limits.
type droppingFake struct {
	*fakePolicy
	dropped atomic.Uint64
}

func (d *droppingFake) DroppedLogs() uint64 { return d.dropped.Load() }

// TestDroppedLogsCounted: the messages a policy drops over its log limits
// reach nriwasm_policy_log_messages_dropped_total, counted once each, from
// what the policy had dropped when it was loaded on.
func TestDroppedLogsCounted(t *testing.T) {
	d := &droppingFake{fakePolicy: newFake(nil)}
	d.dropped.Store(3) // dropped while loading: before the manager counts
	load := func(ctx context.Context, restore wasm.RestoreFunc) (resmgr.Policy, error) {
		if _, err := d.load(ctx, restore); err != nil {
			return nil, err
		}
		return d, nil
	}
	cfg := config.Default()
	cfg.Policy.Name = "conformance"
	cfg.StateDir = t.TempDir()
	met := metrics.New()
	m, err := resmgr.New(context.Background(), cfg, testTopology(), load, resmgr.WithNodeName("node-1"), resmgr.WithMetrics(met))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := func(n string) {
		t.Helper()
		exp := "# HELP nriwasm_policy_log_messages_dropped_total Log messages and output lines of the policy dropped over the limits (100 a call, 64 KiB/s; docs/security.md).\n# TYPE nriwasm_policy_log_messages_dropped_total counter\nnriwasm_policy_log_messages_dropped_total " + n + "\n"
		if err := testutil.GatherAndCompare(met.Registry, strings.NewReader(exp), "nriwasm_policy_log_messages_dropped_total"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Synchronize(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	want("0")
	d.dropped.Add(39900)
	pod, c := container("c", "4-5")
	if _, _, err := m.CreateContainer(context.Background(), pod, c); err != nil {
		t.Fatal(err)
	}
	want("39900")
	if _, err := m.Synchronize(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	want("39900") // no new drops: nothing counted twice
}
