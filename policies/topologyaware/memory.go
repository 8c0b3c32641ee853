package topologyaware

import (
	"github.com/nriwasm/nriwasm/abi/cpuset"
)

// memsOf returns the memory nodes for a pool over the given NUMA nodes: those
// of them that have memory, plus every CPU-less memory node (PMEM, HBM, CXL)
// whose closest CPU node is one of them (all closest ones on a tie). A node
// without memory of its own and without such a node borrows the memory nodes
// closest to it, so a pool never answers an empty set on a node that has
// memory somewhere.
func (ix *topoIndex) memsOf(nodes cpuset.Set) cpuset.Set {
	var mems []uint32
	for _, n := range nodes.Sorted() {
		mems = append(mems, ix.nodeMems(n)...)
	}
	return cpuset.New(mems...)
}

func (ix *topoIndex) nodeMems(n uint32) []uint32 {
	var mems []uint32
	if ix.HasMemory(n) {
		mems = append(mems, n)
	}
	for _, m := range ix.NodeIDs() {
		if m != n && ix.HasMemory(m) && len(ix.Node(m).GetCpus()) == 0 && ix.closestCPUNodes(m).Contains(n) {
			mems = append(mems, m)
		}
	}
	if len(mems) == 0 {
		best := uint32(0)
		for _, m := range ix.NodeIDs() {
			if !ix.HasMemory(m) {
				continue
			}
			switch d := ix.Distance(n, m); {
			case len(mems) == 0 || d < best:
				best, mems = d, []uint32{m}
			case d == best:
				mems = append(mems, m)
			}
		}
	}
	return mems
}

// closestCPUNodes are the nodes with CPUs nearest to node m.
func (ix *topoIndex) closestCPUNodes(m uint32) cpuset.Set {
	var best uint32
	var closest []uint32
	for _, n := range ix.NodeIDs() {
		if len(ix.Node(n).GetCpus()) == 0 {
			continue
		}
		switch d := ix.Distance(m, n); {
		case len(closest) == 0 || d < best:
			best, closest = d, []uint32{n}
		case d == best:
			closest = append(closest, n)
		}
	}
	return cpuset.New(closest...)
}
