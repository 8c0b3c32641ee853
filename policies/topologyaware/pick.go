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
}

func (c *freeCore) whole() bool { return len(c.free) == c.threads }

// budget limits which CPUs a pick may take: taking a CPU removes 1000m from
// the shared capacity of every pool on its chain, and no pool may drop below
// what its shared containers were granted. A nil budget allows everything.
type budget struct {
	chain func(cpu uint32) []int // the limited pools that hold cpu
	slack map[int]int64          // pool id → shared capacity to spare, milli-CPU
}

// take commits cpus to the pick if every pool they drain can spare them.
func (b *budget) take(cpus []uint32) bool {
	if b == nil {
		return true
	}
	need := map[int]int64{}
	for _, cpu := range cpus {
		for _, id := range b.chain(cpu) {
			need[id] += 1000
		}
	}
	for id, n := range need {
		if b.slack[id] < n {
			return false
		}
	}
	for id, n := range need {
		b.slack[id] -= n
	}
	return true
}

// pick chooses n CPUs of cands, packed by topology: whole cores first, in
// socket, die, node and core order, so a grant spans as few cores and nodes
// as it can; then, for a remainder smaller than a core, threads of cores that
// are already split before a whole core is broken. It reports false when n
// CPUs cannot be had within the budget.
func (ix *topoIndex) pick(cands cpuset.Set, n int, b *budget) (cpuset.Set, bool) {
	if n <= 0 {
		return cpuset.Set{}, n == 0
	}
	if cands.Size() < n {
		return cpuset.Set{}, false
	}
	cores := ix.freeCores(cands)
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
	var rest []*freeCore
	for i, c := range cores {
		if !used[i] {
			rest = append(rest, c)
		}
	}
	slices.SortStableFunc(rest, func(x, y *freeCore) int {
		return cmp.Or(cmp.Compare(boolInt(x.whole()), boolInt(y.whole())), cmp.Compare(len(x.free), len(y.free)))
	})
	for _, c := range rest {
		for _, cpu := range c.free {
			if len(picked) == n {
				return cpuset.New(picked...), true
			}
			if b.take([]uint32{cpu}) {
				picked = append(picked, cpu)
			}
		}
	}
	return cpuset.New(picked...), len(picked) == n
}

// freeCores groups cands by core, in socket, die, node and core order.
func (ix *topoIndex) freeCores(cands cpuset.Set) []*freeCore {
	byCore := map[uint32]*freeCore{}
	var cores []*freeCore
	for _, id := range cands.Sorted() {
		info := ix.cpus[id]
		c := byCore[info.core]
		if c == nil {
			c = &freeCore{pkg: info.pkg, die: info.die, node: info.node, core: info.core, threads: info.threads}
			byCore[info.core] = c
			cores = append(cores, c)
		}
		c.free = append(c.free, id)
	}
	slices.SortFunc(cores, func(x, y *freeCore) int {
		return cmp.Or(cmp.Compare(x.pkg, y.pkg), cmp.Compare(x.die, y.die), cmp.Compare(x.node, y.node), cmp.Compare(x.core, y.core))
	})
	return cores
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
