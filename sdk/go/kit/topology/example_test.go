package topology_test

import (
	"fmt"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/topology"
)

// A policy builds the index in Init and asks it during placement.
func Example() {
	topo := &abi.Topology{
		Cpus: []*abi.CPU{
			{Id: 0, NumaNode: 0, ThreadSiblings: []uint32{0, 1}}, {Id: 1, NumaNode: 0, ThreadSiblings: []uint32{0, 1}},
			{Id: 2, NumaNode: 1, ThreadSiblings: []uint32{2, 3}}, {Id: 3, NumaNode: 1, ThreadSiblings: []uint32{2, 3}},
		},
		NumaNodes: []*abi.NUMANode{
			{Id: 0, MemoryBytes: 1 << 30, Distances: []*abi.NodeDistance{{Node: 1, Distance: 21}}},
			{Id: 1, MemoryBytes: 1 << 30},
		},
	}
	ix, err := topology.New(topo)
	if err != nil {
		panic(err)
	}
	fmt.Println("node 1:", ix.NodeCPUs(1))
	fmt.Println("siblings of 3:", ix.Siblings(3))
	fmt.Println("one thread per core:", ix.SingleThreads(cpuset.MustParse("0-3")))
	fmt.Println("distance 0→1:", ix.Distance(0, 1), "1→0:", ix.Distance(1, 0))
	// Output:
	// node 1: 2-3
	// siblings of 3: 2-3
	// one thread per core: 0,2
	// distance 0→1: 21 1→0: 255
}
