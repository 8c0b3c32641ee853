package topologyaware_test

import (
	"context"
	"slices"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// TestPools: every pool of the tree and the reserved CPUs, with what their
// containers were given: an exclusive grant counts whole CPUs in its pool and
// every ancestor, a shared container its request, and a removed container
// leaves its pool.
func TestPools(t *testing.T) {
	h := newHarness(t, "Server2Socket4NodesInterleaved", "")
	h.create(guaranteed("g", 2000))
	h.create(burstable("b", 500))
	h.create(system("s", 100).in("kube-system"))
	type want struct {
		alloc      uint64
		containers []string
	}
	check := func(wants map[string]want) {
		t.Helper()
		resp, err := h.client.Pools(context.Background(), &abi.PoolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		d := h.dump()
		var names []string
		for _, p := range resp.GetPools() {
			names = append(names, p.GetName())
			w := wants[p.GetName()]
			if p.GetAllocatedMilliCpu() != w.alloc || !slices.Equal(p.GetContainerIds(), w.containers) {
				t.Errorf("pool %s: allocated %d, containers %q; want %d, %q", p.GetName(), p.GetAllocatedMilliCpu(), p.GetContainerIds(), w.alloc, w.containers)
			}
			for _, dp := range d.Pools {
				if dp.Name == p.GetName() && (p.GetCpus() != dp.CPUs || p.GetSharedCpus() != dp.Shared || p.GetMemoryNodes() != dp.Mems) {
					t.Errorf("pool %s: cpus %q shared %q mems %q, DumpState says %q %q %q", p.GetName(),
						p.GetCpus(), p.GetSharedCpus(), p.GetMemoryNodes(), dp.CPUs, dp.Shared, dp.Mems)
				}
			}
		}
		if wantNames := []string{"root", "socket0", "node0", "node1", "socket1", "node2", "node3", "reserved"}; !slices.Equal(names, wantNames) {
			t.Fatalf("pools %q, want %q", names, wantNames)
		}
	}
	check(map[string]want{
		"root":     {alloc: 2500},
		"socket0":  {alloc: 2000},
		"node1":    {alloc: 2000, containers: []string{"g"}},
		"socket1":  {alloc: 500, containers: []string{"b"}},
		"reserved": {alloc: 100, containers: []string{"s"}},
	})
	h.apply(h.remove("g"))
	check(map[string]want{
		"root":     {alloc: 500},
		"socket1":  {alloc: 500, containers: []string{"b"}},
		"reserved": {alloc: 100, containers: []string{"s"}},
	})
}
