package topologyaware

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/sdk/go/kit/dirty"
)

// level is a pool's place in the tree.
type level int

const (
	levelRoot level = iota
	levelSocket
	levelDie
	levelNode
	// levelL3: CPUs sharing an L3 cache, below a NUMA node (or a socket or
	// die of one node) that holds more than one whole L3 (nri-plugins'
	// buildL3CachePool).
	levelL3
)

var levelNames = [...]string{"root", "socket", "die", "numa", "l3cache"}

// pool is one node of the pool tree: a topologically aligned set of CPUs and
// the memory nodes that go with them. Siblings are disjoint; a parent holds
// the union of its children.
type pool struct {
	id       int // pre-order index: the root is 0
	name     string
	level    level
	depth    int
	parent   *pool
	children []*pool

	cpus     cpuset.Set // its available CPUs, reserved and isolated ones included
	nodes    cpuset.Set // the NUMA nodes of those CPUs
	mems     cpuset.Set // the memory nodes of its CPUs' nodes, every kind
	memsText string     // those of the default kinds: what its containers get unless annotated
	memBytes uint64     // the memory of those nodes (MemTotal)
	memMask  nodeMask   // mems as a mask
	maskID   int        // pools of one memMask share an id (memory offers are cached by it)
	defMask  nodeMask   // the nodes of memsText as a mask
	sharable cpuset.Set // cpus − reserved − isolated: what shared containers may use
	isolated cpuset.Set // cpus ∩ isolated: for exclusive grants only

	// allocation state
	// shared is sharable − every exclusive grant, recomputed from *excl by
	// sharedSet when setStale; nShared is its size, always current.
	shared     cpuset.Set
	nShared    int
	setStale   bool
	excl       *cpuset.Set
	sharedText string // shared in list form, when not stale
	stale      bool
	granted    int64        // shared milli-CPU of the containers in its subtree
	tokens     int64        // of which the 1m tokens of containers that request no CPU
	members    []*container // the containers whose cpuset follows shared, by id
	dirty.Mark              // set while queued in state.changed
	seen       int          // the state.epoch of the last refresh that visited it
	colocated  int          // containers placed in this very pool, reserved and unaccounted ones aside
	postID     int          // post-order index: nri-plugins' pool ids, its last tie-break
}

// topologyLevel is the pool's level in nri-plugins' terms (system, package,
// die, numa): a root over one socket is that socket's package.
func (p *pool) topologyLevel() level {
	if p.level == levelRoot && (len(p.children) == 0 || p.children[0].level != levelSocket) {
		return levelSocket
	}
	return p.level
}

// slack is the pool's spare shared capacity in milli-CPU.
func (p *pool) slack() int64 { return 1000*int64(p.nShared) - p.granted }

// free is what a new shared container in p may use: the least slack of p and
// its ancestors, whose shared CPUs p's containers also consume.
func (p *pool) free() int64 {
	f := p.slack()
	for a := p.parent; a != nil; a = a.parent {
		f = min(f, a.slack())
	}
	return f
}

// freeWhole is how many whole CPUs of shared capacity p has free as
// nri-plugins counts them (AllocatableSharedCPU / 1000): free without the
// tokens of containers that request no CPU.
func (p *pool) freeWhole() int {
	f := p.slack() + p.tokens
	for a := p.parent; a != nil; a = a.parent {
		f = min(f, a.slack()+a.tokens)
	}
	return int(max(f, 0) / 1000)
}

// buildPools builds the tree over the online CPUs: root, sockets, dies,
// NUMA nodes, each pool holding its available CPUs, skipping every level where a pool would have a single child
// (that child would equal its parent). The result is in pre-order.
func buildPools(ix *topoIndex, r resources) []*pool {
	var pools []*pool
	var grow func(p *pool, cpus []uint32)
	grow = func(p *pool, cpus []uint32) {
		p.id = len(pools)
		pools = append(pools, p)
		p.cpus = cpuset.New(cpus...).Intersection(r.available)
		var nodes []uint32
		for _, id := range cpus {
			nodes = append(nodes, ix.cpus[id].node)
		}
		p.nodes = cpuset.New(nodes...)
		p.mems = ix.memsOf(p.nodes)
		if p.parent == nil {
			// nri-plugins' buildRootPool: the root's memory is every node
			// with memory, whatever availableResources leaves of the CPUs.
			p.mems = ix.memsOf(cpuset.New(ix.NodeIDs()...))
		}
		// What a container gets by default: memDefault's kinds, the whole
		// set where the pool has none of them.
		if def := ix.ofKinds(p.mems, ix.defaultKinds()); !def.IsEmpty() {
			p.memsText, p.memBytes, p.defMask = def.String(), ix.memBytes(def), maskOf(def.Sorted())
		} else {
			p.memsText, p.memBytes, p.defMask = p.mems.String(), ix.memBytes(p.mems), maskOf(p.mems.Sorted())
		}
		p.memMask = maskOf(p.mems.Sorted())
		p.isolated = p.cpus.Intersection(r.isolated)
		p.sharable = p.cpus.Difference(r.reserved).Difference(r.isolated)
		p.shared, p.nShared, p.stale = p.sharable, p.sharable.Size(), true
		for lv := p.level + 1; lv <= levelL3; lv++ {
			keys, groups := ix.groupBy(cpus, lv)
			if len(groups) < 2 {
				continue
			}
			for i, g := range groups {
				c := &pool{level: lv, depth: p.depth + 1, parent: p, name: poolName(p, lv, keys[i])}
				p.children = append(p.children, c)
				grow(c, g)
			}
			return
		}
	}
	// The tree follows the hardware, as nri-plugins' does: availableResources
	// takes CPUs out of pools, not pools out of the tree.
	grow(&pool{name: "root", level: levelRoot}, ix.online.Sorted())
	post := 0
	var number func(p *pool)
	number = func(p *pool) {
		for _, c := range p.children {
			number(c)
		}
		p.postID, post = post, post+1
	}
	number(pools[0])
	return pools
}

func poolName(parent *pool, lv level, key uint32) string {
	switch lv {
	case levelSocket:
		return fmt.Sprintf("socket%d", key)
	case levelDie:
		if parent.level == levelRoot {
			return fmt.Sprintf("die%d", key)
		}
		return fmt.Sprintf("%s/die%d", parent.name, key)
	case levelL3:
		return fmt.Sprintf("l3cache%d", key)
	}
	return fmt.Sprintf("node%d", key)
}

// groupBy splits sorted cpus by socket, die, NUMA node or L3 cache, in key
// order (L3 caches in the order of their sysfs ids). L3 groups are those caches whose every online CPU is in cpus; CPUs
// of other caches stay in no group.
func (ix *topoIndex) groupBy(cpus []uint32, lv level) ([]uint32, [][]uint32) {
	byKey := map[uint32][]uint32{}
	for _, id := range cpus {
		info := ix.cpus[id]
		k := info.node
		switch lv {
		case levelSocket:
			k = info.pkg
		case levelDie:
			k = info.die
		case levelL3:
			if info.l3 == nil {
				continue
			}
			k = info.l3.ID
		}
		byKey[k] = append(byKey[k], id)
	}
	if lv == levelL3 {
		for k, g := range byKey {
			if ix.cpus[g[0]].l3.CPUs.Size() != len(g) {
				delete(byKey, k) // only partly among cpus
			}
		}
	}
	keys := make([]uint32, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if lv == levelL3 {
		// L3 pools in the kernel's order of the caches (their sysfs ids),
		// as nri-plugins' L3CacheIDs: it breaks ties between equal pools.
		slices.SortStableFunc(keys, func(a, b uint32) int {
			return cmp.Compare(ix.cpus[byKey[a][0]].l3.SysfsID, ix.cpus[byKey[b][0]].l3.SysfsID)
		})
	}
	groups := make([][]uint32, len(keys))
	for i, k := range keys {
		groups[i] = byKey[k]
	}
	return keys, groups
}
