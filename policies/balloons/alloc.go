package balloons

import (
	"github.com/nriwasm/nriwasm/abi/cpuset"
)

// allocOpts are a balloon type's CPU preferences.
type allocOpts struct {
	// prefer are taken first, in order (isolated CPUs, a core type, CPUs
	// close to devices, the reserved cpuset); avoid last (what other types
	// prefer: the reserved cpuset, isolated CPUs, their devices).
	prefer []cpuset.Set
	avoid  cpuset.Set
	// balance spreads new balloons over packages, dies and nodes with the
	// most free CPUs; otherwise they pack into the fullest node that fits.
	balance bool
	// spread takes one thread per core before a core's second thread.
	spread bool
}

// tierOf ranks a CPU by preference: 0 … len(prefer)-1 preferred, then
// neutral, then avoided.
func (o *allocOpts) tierOf(id uint32) int {
	for i, p := range o.prefer {
		if p.Contains(id) {
			return i
		}
	}
	if o.avoid.Contains(id) {
		return len(o.prefer) + 1
	}
	return len(o.prefer)
}

// counts tracks how many CPUs of a set fall in each core, L2 cache, node,
// die and package.
type counts struct {
	core, l2, node, die, pkg []int
	n                        int
}

func (ix *topoIndex) newCounts() *counts {
	d := ix.dims
	return &counts{core: make([]int, d.core), l2: make([]int, d.l2), node: make([]int, d.node), die: make([]int, d.die), pkg: make([]int, d.pkg)}
}

func (c *counts) add(info cpuInfo, d int) {
	c.core[info.core] += d
	if info.l2 >= 0 {
		c.l2[info.l2] += d
	}
	c.node[info.node] += d
	c.die[info.die] += d
	c.pkg[info.pkg] += d
	c.n += d
}

func (ix *topoIndex) countsOf(set cpuset.Set) *counts {
	c := ix.newCounts()
	for _, id := range set.Sorted() {
		c.add(ix.cpus[id], 1)
	}
	return c
}

// haveOf counts a balloon's CPUs in the index's scratch counts (zero
// between calls); done must be called to zero them again.
func (ix *topoIndex) haveOf(set cpuset.Set) *counts {
	h := ix.scratch
	for _, id := range set.Sorted() {
		h.add(ix.cpus[id], 1)
	}
	return h
}

// done zeroes the scratch counts after haveOf(set) and the changes since.
func (ix *topoIndex) done(set cpuset.Set) {
	h := ix.scratch
	for _, id := range set.Sorted() {
		c := ix.cpus[id]
		h.core[c.core] = 0
		if c.l2 >= 0 {
			h.l2[c.l2] = 0
		}
		h.node[c.node], h.die[c.die], h.pkg[c.pkg] = 0, 0, 0
	}
	h.n = 0
}

// key orders candidate CPUs: the lowest key wins.
type key [7]int

func (k key) less(o key) bool {
	for i := range k {
		if k[i] != o[i] {
			return k[i] < o[i]
		}
	}
	return false
}

// inflate picks n CPUs of free (whose counts are avail) to add to cur, one at a time: the most
// preferred tier first; within it the CPU closest to what the balloon
// holds (same core, L2 cache, node, die, package); between equally close
// CPUs the node that balancing or packing chooses; then whole free cores
// before half-used ones; then the lowest id. It fails, taking nothing,
// when free has fewer than n CPUs.
func (ix *topoIndex) inflate(cur, free cpuset.Set, avail *counts, n int, o *allocOpts) (cpuset.Set, bool) {
	if n <= 0 {
		return cpuset.Set{}, true
	}
	if free.Size() < n {
		return cpuset.Set{}, false
	}
	have := ix.haveOf(cur)
	cands := free.Sorted()
	plain := len(o.prefer) == 0 && o.avoid.IsEmpty()
	tiers := make([]int, len(cands))
	if !plain {
		for i, id := range cands {
			tiers[i] = o.tierOf(id)
		}
	}
	taken := make([]bool, len(cands))
	picked := make([]uint32, 0, n)
	for len(picked) < n {
		best, bestKey := -1, key{}
		consider := func(i int) {
			if !taken[i] {
				if k := ix.inflateKey(cands[i], tiers[i], have, avail, n-len(picked), o); best < 0 || k.less(bestKey) {
					best, bestKey = i, k
				}
			}
		}
		// A CPU of a node the balloon has CPUs in is closer than any other;
		// only a better tier elsewhere beats it. Without tiers, look there
		// first and only.
		if plain && have.n > 0 {
			for i, id := range cands {
				if have.node[ix.cpus[id].node] > 0 {
					consider(i)
				}
			}
		}
		if best < 0 {
			for i := range cands {
				consider(i)
			}
		}
		taken[best] = true
		id := cands[best]
		picked = append(picked, id)
		have.add(ix.cpus[id], 1)
		avail.add(ix.cpus[id], -1)
	}
	for _, id := range picked {
		avail.add(ix.cpus[id], 1) // the caller takes them
	}
	add := cpuset.New(picked...)
	ix.done(cur.Union(add))
	return add, true
}

func (ix *topoIndex) inflateKey(id uint32, tier int, have, avail *counts, need int, o *allocOpts) key {
	c := ix.cpus[id]
	k := key{tier, 0, 0, 0, 0, 0, int(id)}
	switch {
	case have.n == 0:
	case have.core[c.core] > 0:
		k[1] = 0
		if o.spread {
			k[1] = 5
		}
	case c.l2 >= 0 && have.l2[c.l2] > 0:
		k[1] = 2
	case have.node[c.node] > 0:
		k[1] = 4
	case have.die[c.die] > 0:
		k[1] = 6
	case have.pkg[c.pkg] > 0:
		k[1] = 8
	default:
		k[1] = 10
	}
	if o.balance {
		k[2], k[3], k[4] = -avail.pkg[c.pkg], -avail.die[c.die], -avail.node[c.node]
	} else if free := avail.node[c.node]; free >= need {
		k[2], k[3] = 0, free
	} else {
		k[2], k[3] = 1, -free
	}
	if !o.balance {
		k[4] = int(c.node)
	}
	// Whole free cores first: fewer free threads left in the core is worse.
	k[5] = -avail.core[c.core]
	return k
}

// deflate picks n CPUs of cur to give back: the least preferred tier
// first; then CPUs of the node where the balloon has the fewest; then lone
// threads, so whole cores stay (with spread: doubled-up threads first);
// then the highest id.
func (ix *topoIndex) deflate(cur cpuset.Set, n int, o *allocOpts) cpuset.Set {
	if n <= 0 {
		return cpuset.Set{}
	}
	have := ix.haveOf(cur)
	defer ix.done(cur)
	cands := cur.Sorted()
	tiers := make([]int, len(cands))
	for i, id := range cands {
		tiers[i] = o.tierOf(id)
	}
	taken := make([]bool, len(cands))
	var picked []uint32
	for len(picked) < n && len(picked) < len(cands) {
		best, bestKey := -1, key{}
		for i, id := range cands {
			if taken[i] {
				continue
			}
			c := ix.cpus[id]
			core := have.core[c.core]
			if o.spread {
				core = -core
			}
			k := key{-tiers[i], have.node[c.node], core, -int(id), 0, 0, 0}
			if best < 0 || k.less(bestKey) {
				best, bestKey = i, k
			}
		}
		taken[best] = true
		picked = append(picked, cands[best])
		have.add(ix.cpus[cands[best]], -1)
	}
	return cpuset.New(picked...)
}
