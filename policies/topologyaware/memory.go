package topologyaware

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
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

// memKinds is a set of memory kinds: nri-plugins' memory type mask.
type memKinds uint8

const (
	memDRAM memKinds = 1 << iota
	memPMEM
	memHBM
	// memDefault is what a container without a memory-type annotation
	// gets: DRAM and PMEM, not HBM (nri-plugins' newRequest:
	// defaultMemoryType &^ memoryHBM).
	memDefault = memDRAM | memPMEM
	memAll     = memDRAM | memPMEM | memHBM
)

var memKindNames = []struct {
	name string
	kind memKinds
}{{"dram", memDRAM}, {"pmem", memPMEM}, {"hbm", memHBM}}

// String lists the kinds as the annotation spells them.
func (k memKinds) String() string {
	var names []string
	for _, n := range memKindNames {
		if k&n.kind != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// parseMemKinds reads a memory-type annotation: kinds separated by commas,
// in any case (nri-plugins' parseMemoryType).
func parseMemKinds(v string) (memKinds, error) {
	var k memKinds
	for _, s := range strings.Split(v, ",") {
		i := slices.IndexFunc(memKindNames, func(n struct {
			name string
			kind memKinds
		}) bool {
			return n.name == strings.ToLower(s)
		})
		if i < 0 {
			return 0, fmt.Errorf("unknown memory type %q (want dram, pmem or hbm)", s)
		}
		k |= memKindNames[i].kind
	}
	return k, nil
}

// kindOf is the kind of node n's memory. CXL memory, a CPU-less far tier as
// PMEM is, counts as PMEM: nri-plugins knows only DRAM, PMEM and HBM.
func (ix *topoIndex) kindOf(n uint32) memKinds {
	switch ix.MemoryKind(n) {
	case abi.MemoryKind_MEMORY_KIND_PMEM, abi.MemoryKind_MEMORY_KIND_CXL:
		return memPMEM
	case abi.MemoryKind_MEMORY_KIND_HBM:
		return memHBM
	}
	return memDRAM
}

// ofKinds is the nodes of mems whose memory is of one of kinds.
func (ix *topoIndex) ofKinds(mems cpuset.Set, kinds memKinds) cpuset.Set {
	var keep []uint32
	for _, n := range mems.Sorted() {
		if ix.kindOf(n)&kinds != 0 {
			keep = append(keep, n)
		}
	}
	return cpuset.New(keep...)
}

// kindsIn is the kinds of the memory nodes in mems.
func (ix *topoIndex) kindsIn(mems cpuset.Set) memKinds {
	var k memKinds
	for _, n := range mems.Sorted() {
		k |= ix.kindOf(n)
	}
	return k
}

// memKindsOf is the memory kinds container c gets: its memory-type
// annotation's, else memDefault, either limited to the kinds the node has
// (nri-plugins' newRequest). An annotation that leaves none of the node's
// kinds, or does not parse, is ignored with a warning.
func (ix *topoIndex) memKindsOf(pod *abi.PodSandbox, c *abi.Container) memKinds {
	have := ix.kinds
	v, ok := effectiveAnnotation(pod, c, containers.KeyMemoryType)
	if !ok || v == "" {
		return memDefault & have
	}
	k, err := parseMemKinds(v)
	switch {
	case err != nil:
		policy.Log.Warnf("container %s: ignoring annotation %s=%q: %v", c.GetId(), containers.KeyMemoryType, v, err)
	case k&have == 0:
		policy.Log.Warnf("container %s: ignoring annotation %s=%q: the node has %s memory only", c.GetId(), containers.KeyMemoryType, v, have)
	default:
		return k & have
	}
	return memDefault & have
}

// defaultKinds is the kinds a container without a memory-type annotation
// gets: memDefault's that the node has.
func (ix *topoIndex) defaultKinds() memKinds { return memDefault & ix.kinds }

// memsFor is the memory nodes of p of the given kinds, in list form; p's
// default ones where it has none of those kinds.
func (s *state) memsFor(p *pool, kinds memKinds) string {
	if kinds == s.ix.defaultKinds() {
		return p.memsText
	}
	if mems := s.ix.ofKinds(p.mems, kinds); !mems.IsEmpty() {
		return mems.String()
	}
	return p.memsText
}

// memBytes is the memory (MemTotal) of nodes.
func (ix *topoIndex) memBytes(nodes cpuset.Set) uint64 {
	var b uint64
	for n := range nodes.All() {
		b += ix.Node(n).GetMemoryBytes()
	}
	return b
}

// poolMemBytes is the memory of p's nodes of kinds: what nri-plugins calls
// the capacity of the pool's memory zone (poolZoneCapacity).
func (s *state) poolMemBytes(p *pool, kinds memKinds) uint64 {
	if kinds == s.ix.defaultKinds() {
		return p.memBytes
	}
	if mems := s.ix.ofKinds(p.mems, kinds); !mems.IsEmpty() {
		return s.ix.memBytes(mems)
	}
	return s.ix.memBytes(p.mems)
}

// withMemLimit is nri-plugins' "memory offer burstability" (compareScores):
// for a container whose memory limit differs from what is allocated for it
// (its request, else its limit: a Burstable container), a pool whose memory
// of the container's kinds holds the limit comes first; without a limit,
// the pool with more memory. Memory is allocated by the request, so such
// containers do not crowd a node out of memory: the limit only picks a pool
// wide enough to burst into, and its memory nodes with it.
func (s *state) withMemLimit(spec *abi.Container, kinds memKinds, next order) order {
	r := spec.GetResources()
	limit := max(r.GetMemoryLimitBytes(), 0)
	if amount := max(r.GetMemoryRequestBytes(), 0); amount == limit || amount == 0 && limit != 0 {
		return next
	}
	lim := uint64(limit)
	return func(a, b *pool, free []int64) int {
		ca, cb := s.poolMemBytes(a, kinds), s.poolMemBytes(b, kinds)
		if lim != 0 {
			if fa, fb := ca >= lim, cb >= lim; fa != fb {
				return first(fa)
			}
		} else if ca != cb {
			return cmp.Compare(cb, ca)
		}
		return next(a, b, free)
	}
}

// withMemKinds puts the pools that have memory of every kind asked for
// first, then those of next (nri-plugins' compareScores: a pool whose memory
// offer is of the requested type wins).
func (s *state) withMemKinds(kinds memKinds, next order) order {
	if kinds == s.ix.defaultKinds() {
		return next
	}
	return func(a, b *pool, free []int64) int {
		ha, hb := s.ix.kindsIn(a.mems)&kinds == kinds, s.ix.kindsIn(b.mems)&kinds == kinds
		if ha != hb {
			return first(ha)
		}
		return next(a, b, free)
	}
}
