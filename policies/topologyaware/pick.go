package topologyaware

import (
	"cmp"
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
)

// freeCore is a core with some of its threads among the candidates.
type freeCore struct {
	pkg, die, node, core uint32
	threads              int
	free                 []uint32
	count                int // how many of its threads are candidates
}

func (c *freeCore) whole() bool { return len(c.free) == c.threads }

// budget limits which CPUs a pick may take: taking a CPU removes 1000m from
// the shared capacity of every pool on its chain below top (its leaf pool and
// that pool's ancestors, up to the root when top is nil), and no pool may drop
// below what its shared containers were granted. A nil budget allows
// everything.
type budget struct {
	leaf  []*pool // CPU id → its leaf pool
	top   *pool
	slack []int64 // pool id → shared capacity to spare, milli-CPU
	need  []int64 // pool id → what the CPUs being taken need; zero between calls
}

// take commits cpus to the pick if every pool they drain can spare them.
func (b *budget) take(cpus []uint32) bool {
	if b == nil {
		return true
	}
	chain := func(cpu uint32, f func(q *pool)) {
		for q := b.leaf[cpu]; q != nil && q != b.top; q = q.parent {
			f(q)
		}
	}
	ok := true
	for _, cpu := range cpus {
		chain(cpu, func(q *pool) {
			b.need[q.id] += 1000
			ok = ok && b.slack[q.id] >= b.need[q.id]
		})
	}
	for _, cpu := range cpus {
		chain(cpu, func(q *pool) {
			if ok && b.need[q.id] > 0 {
				b.slack[q.id] -= b.need[q.id]
			}
			b.need[q.id] = 0
		})
	}
	return ok
}

// pick chooses n CPUs of cands, packed by topology: whole cores first, in
// socket, die, node and core order, so a grant spans as few cores and nodes
// as it can; then, for a remainder smaller than a core, threads of cores that
// are already split before a whole core is broken. It reports false when n
// CPUs cannot be had within the budget.
func (ix *topoIndex) pick(cands cpuset.Set, n int, b *budget) (cpuset.Set, bool) {
	return ix.pickPrio(cands, n, b, prioNone)
}

// anyPrio is one pass of pickPrio over CPUs of every priority.
var anyPrio = []cpuPrio{prioNone}

// pickPrio is pick for a container preferring CPU priority prefer, as
// nri-plugins' CPU allocator: whole cores with more CPUs of the preferred
// class (then of each class below it, then with fewer above it) come first
// (takeIdleCores), and the remainder takes CPUs of the preferred class, then
// of those below it, then of those above it, each class in pick's order
// (takeIdleThreads). On a machine of one class it is pick.
func (ix *topoIndex) pickPrio(cands cpuset.Set, n int, b *budget, prefer cpuPrio) (cpuset.Set, bool) {
	if n <= 0 {
		return cpuset.Set{}, n == 0
	}
	if cands.Size() < n {
		return cpuset.Set{}, false
	}
	cores := ix.freeCores(cands)
	ranks := anyPrio
	if prefer != prioNone && ix.prio.varied {
		ranks = prioRanks(prefer)
		// A core's class counts are its threads', free or not, as
		// nri-plugins counts its idle cores.
		slices.SortStableFunc(cores, func(x, y *freeCore) int {
			return cmpCounts(ix.prio.core[x.core], ix.prio.core[y.core], prefer)
		})
	}
	var picked []uint32
	used := make([]bool, len(cores))
	for i, c := range cores {
		if len(picked) == n {
			break
		}
		if c.whole() && len(c.free) <= n-len(picked) && b.take(c.free) {
			picked = append(picked, c.free...)
			used[i] = true
		}
	}
	if len(picked) == n {
		return cpuset.New(picked...), true
	}
	// The rest in the order of a stable sort by (whole, free threads), as
	// passes over the cores: a sort's comparisons cost more, in Wasm, than
	// the few passes a core's thread count allows.
	most := 0
	for _, c := range cores {
		most = max(most, len(c.free))
	}
	for _, rank := range ranks {
		for _, whole := range []bool{false, true} {
			for size := 1; size <= most; size++ {
				for i, c := range cores {
					if used[i] || c.whole() != whole || len(c.free) != size {
						continue
					}
					for _, cpu := range c.free {
						if len(picked) == n {
							return cpuset.New(picked...), true
						}
						if (rank == prioNone || ix.prio.of[cpu] == rank) && b.take([]uint32{cpu}) {
							picked = append(picked, cpu)
						}
					}
				}
			}
		}
	}
	return cpuset.New(picked...), len(picked) == n
}

// freeCores groups cands by core, in socket, die, node and core order.
func (ix *topoIndex) freeCores(cands cpuset.Set) []*freeCore {
	if ix.coreSlot == nil {
		ix.coreSlot = make([]int32, len(ix.cpus))
		for i := range ix.coreSlot {
			ix.coreSlot[i] = -1
		}
	}
	ids := cands.Sorted()
	var cores []freeCore
	for _, id := range ids {
		info := ix.cpus[id]
		if ix.coreSlot[info.core] < 0 {
			ix.coreSlot[info.core] = int32(len(cores))
			cores = append(cores, freeCore{pkg: info.pkg, die: info.die, node: info.node, core: info.core, threads: info.threads})
		}
		cores[ix.coreSlot[info.core]].count++
	}
	// One backing array for every core's free CPUs, in id order.
	backing, off := make([]uint32, len(ids)), 0
	for i := range cores {
		cores[i].free, off = backing[off:off:off+cores[i].count], off+cores[i].count
	}
	for _, id := range ids {
		c := &cores[ix.coreSlot[ix.cpus[id].core]]
		c.free = append(c.free, id)
	}
	out := make([]*freeCore, len(cores))
	inOrder := true
	for i := range cores {
		out[i] = &cores[i]
		ix.coreSlot[cores[i].core] = -1
		inOrder = inOrder && (i == 0 || coreLess(out[i-1], out[i]))
	}
	if !inOrder { // CPU ids rarely number cores out of topology order
		slices.SortFunc(out, func(x, y *freeCore) int {
			return cmp.Or(cmp.Compare(x.pkg, y.pkg), cmp.Compare(x.die, y.die), cmp.Compare(x.node, y.node), cmp.Compare(x.core, y.core))
		})
	}
	return out
}

func coreLess(x, y *freeCore) bool {
	if x.pkg != y.pkg {
		return x.pkg < y.pkg
	}
	if x.die != y.die {
		return x.die < y.die
	}
	if x.node != y.node {
		return x.node < y.node
	}
	return x.core < y.core
}
