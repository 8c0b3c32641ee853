package topologyaware

import (
	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// cpuInfo is what placement needs to know about one online CPU.
type cpuInfo struct {
	id, pkg, die, node uint32
	// core is the lowest id of the CPU's thread siblings: it names the core.
	core uint32
	// threads is how many hardware threads the core has.
	threads int
}

// topoIndex indexes the topology Init carried.
type topoIndex struct {
	cpus     []cpuInfo // by CPU id; only the online ones are filled in
	online   cpuset.Set
	isolated cpuset.Set
	nodes    map[uint32]*abi.NUMANode
	nodeIDs  []uint32 // sorted
	coreSlot []int32  // scratch for freeCores: core id → index, -1 between calls
	kinds    memKinds // the kinds of memory the nodes have
}

func newTopoIndex(t *abi.Topology) (*topoIndex, error) {
	if len(t.GetCpus()) == 0 {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "topology.cpus", "the topology lists no online CPU")
	}
	ix := &topoIndex{nodes: map[uint32]*abi.NUMANode{}}
	var online, isolated []uint32
	maxID := uint32(0)
	for _, c := range t.GetCpus() {
		maxID = max(maxID, c.Id)
	}
	if maxID >= 1<<20 {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "topology.cpus", "CPU id %d is out of range", maxID)
	}
	ix.cpus = make([]cpuInfo, maxID+1)
	for _, c := range t.GetCpus() {
		info := cpuInfo{id: c.Id, pkg: c.PackageId, die: c.DieId, node: c.NumaNode, core: c.Id, threads: 1}
		if sib := c.GetThreadSiblings(); len(sib) > 0 {
			info.core = min(sib[0], c.Id)
			info.threads = len(sib)
		}
		ix.cpus[c.Id] = info
		online = append(online, c.Id)
		if c.Isolated {
			isolated = append(isolated, c.Id)
		}
	}
	ix.online, ix.isolated = cpuset.New(online...), cpuset.New(isolated...)
	for _, n := range t.GetNumaNodes() {
		ix.nodes[n.Id] = n
		ix.nodeIDs = append(ix.nodeIDs, n.Id)
	}
	ix.nodeIDs = cpuset.New(ix.nodeIDs...).Sorted()
	for _, n := range ix.nodeIDs {
		if ix.hasMemory(n) {
			ix.kinds |= ix.kindOf(n)
		}
	}
	return ix, nil
}

// distance is the SLIT distance from node a to node b; unknown distances are
// far (255), a node to itself near (10).
func (ix *topoIndex) distance(a, b uint32) uint32 {
	if n := ix.nodes[a]; n != nil {
		for _, d := range n.GetDistances() {
			if d.Node == b {
				return d.Distance
			}
		}
	}
	if a == b {
		return 10
	}
	return 255
}

// hasMemory tells whether node n has memory.
func (ix *topoIndex) hasMemory(n uint32) bool {
	node := ix.nodes[n]
	return node != nil && node.MemoryBytes > 0
}

// singleThread is cpus with one thread of each core: the lowest id of those
// in cpus (nri-plugins' SingleThreadForCPUs, for hide-hyperthreads).
func (ix *topoIndex) singleThread(cpus cpuset.Set) cpuset.Set {
	var keep []uint32
	seen := map[uint32]bool{}
	for _, id := range cpus.Sorted() {
		core := id
		if int(id) < len(ix.cpus) {
			core = ix.cpus[id].core
		}
		if !seen[core] {
			seen[core] = true
			keep = append(keep, id)
		}
	}
	return cpuset.New(keep...)
}
