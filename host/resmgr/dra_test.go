package resmgr_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

const driver = "topology-aware.nri.io"

// draManager runs the real topology-aware policy (natively) with DRA devices
// on, already synchronized with an empty runtime.
func draManager(t *testing.T, traps map[abi.Method]int) (*resmgr.Manager, *fakePolicy) {
	t.Helper()
	f := newFake(traps)
	f.newPol = func() policy.Policy { return topologyaware.New() }
	m := newDRAManager(t, f, nil)
	if _, err := m.Synchronize(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	return m, f
}

func newDRAManager(t *testing.T, f *fakePolicy, mutate func(*config.Config)) *resmgr.Manager {
	t.Helper()
	cfg := config.Default()
	cfg.Policy.Name = "topology-aware"
	cfg.Policy.Data = []byte("dra:\n  enabled: true\n")
	cfg.StateDir = t.TempDir()
	if mutate != nil {
		mutate(cfg)
	}
	m, err := resmgr.New(context.Background(), cfg, testTopology(), f.load, resmgr.WithNodeName("node-1"), resmgr.WithDriverName(driver))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	return m
}

func cpuClaim(uid, device, cpus string) *abi.Claim {
	return &abi.Claim{Uid: uid, Namespace: "default", Name: "claim-" + uid, Results: []*abi.DeviceAllocation{{
		Request: "cpus", Pool: "node-1", Device: device, ConsumedCapacity: map[string]string{"dra.cpu/cpu": cpus},
	}}}
}

func TestDevicesComeFromThePolicyAndAreChecked(t *testing.T) {
	m, f := draManager(t, nil)
	if !m.WantsDRA() {
		t.Fatal("WantsDRA() = false for a configuration with dra.enabled")
	}
	devs, err := m.Devices(context.Background())
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	var names []string
	for _, d := range devs.GetDevices() {
		names = append(names, d.GetName())
	}
	if !slices.Equal(names, []string{"cpudevnuma000", "cpudevnuma001"}) {
		t.Errorf("devices = %q, want one per NUMA node with CPUs", names)
	}
	if got := f.inits[0].GetDriverName(); got != driver {
		t.Errorf("Init.driver_name = %q, want %q", got, driver)
	}
}

func TestClaimsWaitForTheFirstSynchronize(t *testing.T) {
	f := newFake(nil)
	f.newPol = func() policy.Policy { return topologyaware.New() }
	m := newDRAManager(t, f, nil)
	_, err := m.PrepareClaim(context.Background(), cpuClaim("u1", "cpudevnuma000", "2"), func(*abi.AllocateResponse) error { return nil })
	if !errors.Is(err, resmgr.ErrNotSynchronized) {
		t.Fatalf("PrepareClaim before Synchronize: %v, want ErrNotSynchronized", err)
	}
	if f.calls[abi.Method_METHOD_ALLOCATE] != 0 {
		t.Error("the policy was asked to allocate before Synchronize")
	}
}

func TestPrepareIsIdempotentAndJournaled(t *testing.T) {
	m, f := draManager(t, nil)
	ctx := context.Background()
	var writes []*abi.AllocateResponse
	write := func(r *abi.AllocateResponse) error { writes = append(writes, r); return nil }
	claim := cpuClaim("u1", "cpudevnuma000", "2")
	first, err := m.PrepareClaim(ctx, claim, write)
	if err != nil {
		t.Fatalf("PrepareClaim: %v", err)
	}
	second, err := m.PrepareClaim(ctx, claim, write)
	if err != nil {
		t.Fatalf("repeated PrepareClaim: %v", err)
	}
	if !first.EqualVT(second) || len(writes) != 2 || !writes[1].EqualVT(first) {
		t.Errorf("a repeated prepare answered %v (writes %d), want the first answer %v written again", second, len(writes), first)
	}
	if n := f.calls[abi.Method_METHOD_ALLOCATE]; n != 1 {
		t.Errorf("policy asked to allocate %d times, want once", n)
	}
	if got := m.PreparedClaims(); !slices.Equal(got, []string{"u1"}) {
		t.Errorf("journaled claims = %q", got)
	}
	if _, err := m.PrepareClaim(ctx, cpuClaim("u1", "cpudevnuma001", "2"), write); err == nil {
		t.Error("a claim prepared again with other results was accepted")
	}
}

func TestAFailedWriteReleasesTheClaim(t *testing.T) {
	m, f := draManager(t, nil)
	ctx := context.Background()
	boom := errors.New("disk full")
	_, err := m.PrepareClaim(ctx, cpuClaim("u1", "cpudevnuma000", "4"), func(*abi.AllocateResponse) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("PrepareClaim with a failing write: %v, want %v", err, boom)
	}
	if f.calls[abi.Method_METHOD_RELEASE] != 1 || len(m.PreparedClaims()) != 0 {
		t.Fatalf("after a failed write: releases %d, journal %q; want 1 and nothing", f.calls[abi.Method_METHOD_RELEASE], m.PreparedClaims())
	}
	// The CPUs came back: the same claim fits again.
	if _, err := m.PrepareClaim(ctx, cpuClaim("u1", "cpudevnuma000", "4"), func(*abi.AllocateResponse) error { return nil }); err != nil {
		t.Fatalf("prepare after the failed one: %v", err)
	}
}

func TestUnprepareReleasesOnceAndRemovesAlways(t *testing.T) {
	m, f := draManager(t, nil)
	ctx := context.Background()
	if _, err := m.PrepareClaim(ctx, cpuClaim("u1", "cpudevnuma001", "2"), func(*abi.AllocateResponse) error { return nil }); err != nil {
		t.Fatal(err)
	}
	removes := 0
	remove := func() error { removes++; return nil }
	for range 2 {
		if err := m.UnprepareClaim(ctx, "u1", remove); err != nil {
			t.Fatalf("UnprepareClaim: %v", err)
		}
	}
	if f.calls[abi.Method_METHOD_RELEASE] != 1 || removes != 2 || len(m.PreparedClaims()) != 0 {
		t.Errorf("releases %d, removes %d, journal %q; want 1, 2 and nothing", f.calls[abi.Method_METHOD_RELEASE], removes, m.PreparedClaims())
	}
}

func TestAClaimSurvivesATrapAndARestart(t *testing.T) {
	m, f := draManager(t, map[abi.Method]int{abi.Method_METHOD_ALLOCATE: 0})
	ctx := context.Background()
	if _, err := m.PrepareClaim(ctx, cpuClaim("u1", "cpudevnuma000", "2"), func(*abi.AllocateResponse) error { return nil }); err != nil {
		t.Fatal(err)
	}
	// The next Allocate traps: the instance is rebuilt from the journal (u1
	// included) and the call retried, so u2 gets other CPUs than u1.
	f.traps[abi.Method_METHOD_ALLOCATE] = 1
	r2, err := m.PrepareClaim(ctx, cpuClaim("u2", "cpudevnuma000", "2"), func(*abi.AllocateResponse) error { return nil })
	if err != nil {
		t.Fatalf("PrepareClaim after a trap: %v", err)
	}
	if f.rebuilds != 1 {
		t.Fatalf("rebuilds = %d, want 1", f.rebuilds)
	}
	last := f.inits[len(f.inits)-1]
	if len(last.GetRestore().GetClaims()) != 1 || last.GetRestore().GetClaims()[0].GetClaim().GetUid() != "u1" {
		t.Fatalf("rebuilt instance restored claims %v, want u1", last.GetRestore().GetClaims())
	}
	j := m.Journal()
	cpus := func(r *abi.AllocateResponse) string { return r.GetDevices()[0].GetContainerEdits().GetEnv()[0] }
	if cpus(r2) == cpus(j.GetClaims()[0].GetAllocation()) {
		t.Errorf("u2 got u1's CPUs after the rebuild: %s", cpus(r2))
	}
}

// TestPreparedClaimsSurviveARestart: kubelet does not prepare again after the
// agent restarts, so the claim comes back from the checkpoint, the new
// policy instance is restored with it (its CPUs stay taken), and a later
// Unprepare releases it.
func TestPreparedClaimsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	stateDir := func(c *config.Config) { c.StateDir = dir }
	f := newFake(nil)
	f.newPol = func() policy.Policy { return topologyaware.New() }
	m := newDRAManager(t, f, stateDir)
	ctx := context.Background()
	if _, err := m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	first, err := m.PrepareClaim(ctx, cpuClaim("u1", "cpudevnuma000", "3"), func(*abi.AllocateResponse) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}

	f2 := newFake(nil)
	f2.newPol = func() policy.Policy { return topologyaware.New() }
	m2 := newDRAManager(t, f2, stateDir)
	if got := m2.PreparedClaims(); !slices.Equal(got, []string{"u1"}) {
		t.Fatalf("claims after the restart = %q, want u1", got)
	}
	if claims := f2.inits[0].GetRestore().GetClaims(); len(claims) != 1 || !claims[0].GetAllocation().EqualVT(first) {
		t.Fatalf("the new instance was restored with %v, want u1's allocation", claims)
	}
	if _, err := m2.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	// The restored claim's CPUs stay taken: a second claim gets others.
	second, err := m2.PrepareClaim(ctx, cpuClaim("u2", "cpudevnuma000", "3"), func(*abi.AllocateResponse) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	env := func(r *abi.AllocateResponse) string { return r.GetDevices()[0].GetContainerEdits().GetEnv()[0] }
	if strings.SplitN(env(first), "=", 2)[1] == strings.SplitN(env(second), "=", 2)[1] {
		t.Errorf("u2 got u1's CPUs after the restart: %s", env(second))
	}
	if err := m2.UnprepareClaim(ctx, "u1", func() error { return nil }); err != nil {
		t.Fatalf("Unprepare of the restored claim: %v", err)
	}
	if f2.calls[abi.Method_METHOD_RELEASE] != 1 {
		t.Errorf("releases = %d, want 1", f2.calls[abi.Method_METHOD_RELEASE])
	}
}
