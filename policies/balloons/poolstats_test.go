package balloons_test

import (
	"context"
	"slices"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
)

// TestPools: one pool per balloon, as DumpState lists them, with its
// containers and their requests; the answer passes the host's checks, and an
// emptied balloon that deflates shows it.
func TestPools(t *testing.T) {
	h := mustOpen(t, nativeOpen, "Server2Socket4NodesInterleaved", `
balloonTypes:
- name: app
  namespaces: [app]
  minCPUs: 1
  shareIdleCPUsInSame: system
  pinMemory: true
`)
	h.Create(ctr("a1", 1500).In("app"))
	h.Create(ctr("a2", 300).In("app"))
	h.Create(ctr("d", 200))
	pools := func() []*abi.Pool {
		t.Helper()
		resp, err := h.Client.Pools(context.Background(), &abi.PoolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		limits, err := validate.New(h.Topology)
		if err != nil {
			t.Fatal(err)
		}
		if err := limits.Pools(resp); err != nil {
			t.Fatalf("the host refuses the answer: %v", err)
		}
		d := h.dump()
		if len(resp.GetPools()) != len(d.Balloons) {
			t.Fatalf("%d pools, DumpState lists %d balloons", len(resp.GetPools()), len(d.Balloons))
		}
		for i, p := range resp.GetPools() {
			b := d.Balloons[i]
			if p.GetName() != b.Name || p.GetCpus() != b.CPUs || p.GetSharedCpus() != b.SharedIdle ||
				p.GetAllocatedMilliCpu() != uint64(b.RequestMilli) || !slices.Equal(p.GetContainerIds(), b.Containers) {
				t.Errorf("pool %v, DumpState says %+v", p, b)
			}
		}
		return resp.GetPools()
	}
	byName := func(ps []*abi.Pool, name string) *abi.Pool {
		t.Helper()
		i := slices.IndexFunc(ps, func(p *abi.Pool) bool { return p.GetName() == name })
		if i < 0 {
			t.Fatalf("no pool %s among %v", name, ps)
		}
		return ps[i]
	}
	app := byName(pools(), "app[0]")
	if app.GetAllocatedMilliCpu() != 1800 || app.GetCapacityMilliCpu() != 2000 || !slices.Equal(app.GetContainerIds(), []string{"a1", "a2"}) ||
		app.GetSharedCpus() == "" || app.GetMemoryNodes() == "" {
		t.Fatalf("app[0] = %v, want 1800 of 2000 milli-CPU, a1 and a2, idle CPUs shared, memory pinned", app)
	}
	if d := byName(pools(), "default[0]"); !slices.Equal(d.GetContainerIds(), []string{"d"}) || d.GetAllocatedMilliCpu() != 200 {
		t.Fatalf("default[0] = %v, want d with 200 milli-CPU", d)
	}
	h.Apply(h.Remove("a1"))
	if app := byName(pools(), "app[0]"); app.GetCapacityMilliCpu() != 1000 || !slices.Equal(app.GetContainerIds(), []string{"a2"}) {
		t.Fatalf("after a1 left, app[0] = %v, want a2 alone in 1 CPU", app)
	}
}
