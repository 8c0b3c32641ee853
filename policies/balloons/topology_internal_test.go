package balloons

import (
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// TestNodesBeyondTheMask checks nodesOf and memsList on both of their paths:
// a node mask up to 64 NUMA nodes, lists beyond.
func TestNodesBeyondTheMask(t *testing.T) {
	for _, nodes := range []uint32{16, 70} {
		topo := &abi.Topology{}
		for n := range nodes {
			topo.Cpus = append(topo.Cpus, &abi.CPU{Id: n, CoreId: n, PackageId: n / 8, NumaNode: n, ThreadSiblings: []uint32{n}})
			topo.NumaNodes = append(topo.NumaNodes, &abi.NUMANode{Id: n, MemoryBytes: 1 << 30})
		}
		ix, err := newTopoIndex(topo)
		if err != nil {
			t.Fatal(err)
		}
		cpus := cpuset.New(0, 3, nodes-1, nodes-2)
		want := cpuset.New(0, 3, nodes-2, nodes-1).String()
		if got := ix.nodesOf(cpus).String(); got != want {
			t.Errorf("%d nodes: nodesOf(%s) = %s, want %s", nodes, cpus, got, want)
		}
		for range 2 { // computed, then memoized
			if got := ix.memsList(cpus, nil); got != want {
				t.Errorf("%d nodes: memsList(%s) = %s, want %s", nodes, cpus, got, want)
			}
		}
		if got := ix.memsList(cpuset.New(1), []MemoryType{"DRAM"}); got != "1" {
			t.Errorf("%d nodes: memsList(1, DRAM) = %s, want 1", nodes, got)
		}
	}
}
