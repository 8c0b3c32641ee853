package topologyaware

import (
	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/topology"
)

// cpuInfo is what placement needs to know about one online CPU, by value in
// a slice for the hot paths.
type cpuInfo struct {
	id, pkg, die, node uint32
	// core is the lowest id of the CPU's thread siblings: it names the core.
	core uint32
	// threads is how many hardware threads the core has.
	threads int
	// l3 is the CPU's L3 cache, nil when the topology lists none.
	l3 *topology.Cache
}

// topoIndex indexes the topology Init carried: the kit's index (distances,
// nodes, single threads) and the per-CPU table placement walks.
type topoIndex struct {
	*topology.Index
	cpus     []cpuInfo // by CPU id; only the online ones are filled in
	online   cpuset.Set
	isolated cpuset.Set
	coreSlot []int32  // scratch for freeCores: core id → index, -1 between calls
	kinds    memKinds // the kinds of memory the nodes have
	prio     priorities
}

func newTopoIndex(t *abi.Topology) (*topoIndex, error) {
	kit, err := topology.New(t)
	if err != nil {
		return nil, err
	}
	ix := &topoIndex{Index: kit, cpus: make([]cpuInfo, kit.MaxID()+1), online: kit.Online(), isolated: kit.Isolated()}
	for id := range ix.online.All() {
		c, _ := kit.CPU(id)
		ix.cpus[id] = cpuInfo{id: id, pkg: c.Package, die: c.Die, node: c.Node, core: c.Core, threads: c.Threads}
	}
	caches := ix.Caches()
	for i := range caches {
		if c := &caches[i]; c.Level == 3 {
			for id := range c.CPUs.All() {
				ix.cpus[id].l3 = c
			}
		}
	}
	ix.prio = discoverPriorities(t, ix)
	for _, n := range ix.NodeIDs() {
		if ix.HasMemory(n) {
			ix.kinds |= ix.kindOf(n)
		}
	}
	return ix, nil
}
