package balloons

import (
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
)

// allocOpts are a balloon type's CPU preferences.
type allocOpts struct {
	// prefer are taken first, in order (the reserved cpuset for
	// reserved, CPUs close to devices, isolated CPUs, a core type); avoid
	// after them, in order: nri-plugins' "far from" hints, the CPUs of the
	// devices other types prefer (resolveTypes, farFrom).
	prefer []cpuset.Set
	avoid  []cpuset.Set
	// balance spreads new balloons over packages, dies and nodes with the
	// most free CPUs; otherwise they pack into the fullest node that fits.
	balance bool
	// spread takes one thread per core before a core's second thread.
	spread bool
}

// restrict keeps of ids, the free CPUs, those a resize of n CPUs takes
// from, as nri-plugins' resizeCpusWithDevices applies topology hints, one
// hint at a time: each preferred set in turn if n of the CPUs kept so far
// lie in it, then each avoided set in turn if n of the CPUs kept so far lie
// outside it. A hint that cannot be met whole is dropped, not met in part,
// and the next one is tried on what the hints before it kept. ids is
// filtered in place.
func (o *allocOpts) restrict(ids []uint32, n int) []uint32 {
	for _, p := range o.prefer {
		if countIn(ids, p, true) >= n {
			ids = slices.DeleteFunc(ids, func(id uint32) bool { return !p.Contains(id) })
		}
	}
	for _, a := range o.avoid {
		if countIn(ids, a, false) >= n {
			ids = slices.DeleteFunc(ids, a.Contains)
		}
	}
	return ids
}

// hinted tells whether the hints may keep fewer than all nFree free CPUs
// for a resize of n (see restrict): whether some preferred set holds n free
// CPUs but not all, or some avoided set holds free CPUs and leaves n.
func (o *allocOpts) hinted(free []bool, nFree, n int) bool {
	freeIn := func(set cpuset.Set) int {
		c := 0
		for id := range set.All() {
			if int(id) < len(free) && free[id] {
				c++
			}
		}
		return c
	}
	for _, p := range o.prefer {
		if c := freeIn(p); c >= n && c < nFree {
			return true
		}
	}
	for _, a := range o.avoid {
		if c := freeIn(a); c > 0 && nFree-c >= n {
			return true
		}
	}
	return false
}

// countIn counts the ids in set (in true) or out of it (in false).
func countIn(ids []uint32, set cpuset.Set, in bool) int {
	c := 0
	for _, id := range ids {
		if set.Contains(id) == in {
			c++
		}
	}
	return c
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

// key orders candidate CPUs: the lowest key wins. hi packs the closeness
// and the node choice, lo whole-core preference and the id.
type key struct{ hi, lo uint64 }

// inflate picks n of the free CPUs (nFree of them, counted in avail and,
// per node of the CPU tree, in tf) to add to cur, as nri-plugins' balloons
// resizes a balloon (cmd/plugins/balloons/policy/cputree.go, ResizeCpus):
// all the free CPUs if n are left; otherwise the free CPUs the hints keep
// (restrict), then the node of the CPU tree that holds n of them
// (cpuTree.choose). A type that spreads on physical cores takes one CPU at
// a time, each the thread node chosen so; otherwise the CPUs within the
// node are picked by pickWithin. It fails, taking nothing, when fewer than
// n CPUs are free.
func (ix *topoIndex) inflate(cur cpuset.Set, free []bool, nFree int, avail *counts, tf *treeFree, n int, o *allocOpts) (cpuset.Set, bool) {
	if n <= 0 {
		return cpuset.Set{}, true
	}
	if nFree < n {
		return cpuset.Set{}, false
	}
	if nFree == n {
		all := make([]uint32, 0, n)
		for _, id := range ix.onlineIDs {
			if free[id] {
				all = append(all, id)
			}
		}
		return cpuset.New(all...), true
	}
	split := 0
	if o.spread {
		split = 1
	}
	sh := ix.tree.shapes[split]
	counts, isCand := tf[split], free
	if o.hinted(free, nFree, n) {
		// Count the candidates the hints keep per node, instead of the free
		// CPUs the state keeps counted.
		cands := ix.cands[:0]
		for _, id := range ix.onlineIDs {
			if free[id] {
				cands = append(cands, id)
			}
		}
		cands = o.restrict(cands, n)
		for _, id := range cands {
			ix.isCand[id] = true
			for i, key := range sh.key {
				sh.scratch[i][key[id]]++
			}
		}
		counts, isCand = sh.scratch, ix.isCand
		defer func() {
			for _, id := range cands {
				ix.isCand[id] = false
				for i, key := range sh.key {
					sh.scratch[i][key[id]] = 0
				}
			}
			ix.cands = cands[:0]
		}()
	}
	from := ix.from[:0]
	defer func() { ix.from = from[:0] }()
	if depth, k, ok := ix.tree.choose(sh, counts, cur, n, o.balance); ok {
		from = sh.nodeCPUs(from, depth, k, isCand)
	} else {
		from = sh.nodeCPUs(from, 0, -1, isCand)
	}
	switch {
	case len(from) == n:
		return cpuset.New(from...), true
	case o.spread:
		// One at a time: each the thread node chosen for one CPU, counted
		// taken until the caller takes them all.
		picked := make([]uint32, 0, n)
		grown := cur
		for range n {
			depth, k, _ := ix.tree.choose(sh, counts, grown, 1, o.balance)
			id := sh.order[sh.lo[depth][k]]
			picked = append(picked, id)
			grown = grown.Union(cpuset.New(id))
			isCand[id] = false
			for i, key := range sh.key {
				counts[i][key[id]]--
			}
		}
		for _, id := range picked {
			isCand[id] = true
			for i, key := range sh.key {
				counts[i][key[id]]++
			}
		}
		return cpuset.New(picked...), true
	}
	return ix.pickWithin(cur, from, free, avail, n, o), true
}

// pickWithin picks n of the free CPUs ids (a tree node's) to add to cur,
// one at a time, as nri-plugins' CPU allocator takes them within the node:
// the CPU closest to what the balloon holds (same core, L2 cache, node,
// die, package); between equally close CPUs the node that balancing or
// packing chooses; then whole free cores before half-used ones; then the
// lowest id.
func (ix *topoIndex) pickWithin(cur cpuset.Set, ids []uint32, free []bool, avail *counts, n int, o *allocOpts) cpuset.Set {
	have := ix.haveOf(cur)
	picked := make([]uint32, 0, n)
	for len(picked) < n {
		best, _ := ix.bestFree(ids, free, have, avail, n-len(picked), o)
		id := best.id
		free[id] = false // until the caller takes it
		picked = append(picked, id)
		have.add(ix.cpus[id], 1)
		avail.add(ix.cpus[id], -1)
	}
	for _, id := range picked {
		free[id] = true
		avail.add(ix.cpus[id], 1) // the caller takes them
	}
	add := cpuset.New(picked...)
	ix.done(cur.Union(add))
	return add
}

// scored is a candidate CPU and its key.
type scored struct {
	id uint32
	k  key
}

// bestFree finds the free CPU of ids with the lowest key (see pickWithin):
// the hints have already narrowed ids (restrict), so o's balance and spread
// alone weigh in. The key is computed inline: in Wasm a Go function call
// costs more than the whole key.
func (ix *topoIndex) bestFree(ids []uint32, free []bool, have, avail *counts, need int, o *allocOpts) (scored, bool) {
	// 15 bits per free count: nodes of up to 32,767 CPUs.
	const m = 1<<15 - 1
	best, bestKey := -1, key{}
	for _, id := range ids {
		if !free[id] {
			continue
		}
		c := &ix.cpus[id]
		closeness := uint64(10)
		switch {
		case have.n == 0:
			closeness = 0
		case have.core[c.core] > 0:
			closeness = 0
			if o.spread {
				closeness = 5
			}
		case c.l2 >= 0 && have.l2[c.l2] > 0:
			closeness = 2
		case have.node[c.node] > 0:
			closeness = 4
		case have.die[c.die] > 0:
			closeness = 6
		case have.pkg[c.pkg] > 0:
			closeness = 8
		}
		var topo uint64
		switch nf := uint64(avail.node[c.node]); {
		case o.balance:
			topo = (m-uint64(avail.pkg[c.pkg]))<<30 | (m-uint64(avail.die[c.die]))<<15 | (m - nf)
		case nf >= uint64(need):
			topo = nf<<15 | uint64(c.node)
		default:
			topo = 1<<45 | (m-nf)<<15 | uint64(c.node)
		}
		// Whole free cores first, but for the first CPUs of a packed
		// balloon: the core that fits what is still needed with the
		// fewest threads left over, so a new balloon takes lone threads
		// before it breaks a whole core (nri-plugins' packing sorts by
		// fewest free CPUs down to the core, among those that hold the
		// request). A growing balloon keeps to whole cores: its CPU list
		// stays short, and every update of its containers carries it.
		fc := uint64(avail.core[c.core])
		coreKey := 255 - fc
		if have.n == 0 && !o.balance && !o.spread {
			if fc >= uint64(need) {
				coreKey = fc - uint64(need)
			} else {
				coreKey = 256 + 255 - fc
			}
		}
		k := key{hi: closeness<<47 | topo, lo: coreKey<<32 | uint64(id)}
		if best < 0 || k.hi < bestKey.hi || k.hi == bestKey.hi && k.lo < bestKey.lo {
			best, bestKey = int(id), k
		}
	}
	return scored{id: uint32(best), k: bestKey}, best >= 0
}

// deflate picks n CPUs of cur to give back, as nri-plugins' balloons
// deflates a balloon (cmd/plugins/balloons/policy/cputree.go, ResizeCpus
// with a negative delta): all of cur if that is n; otherwise, when the type
// prefers CPUs (its devices, the reserved cpuset, isolated CPUs, a core
// type: resizeCpusWithDevices), each of cur's CPUs is weighted by the
// preferred sets holding it (the first set weighing more than all later
// ones together) and the least weighted go for sure, the rest of n coming
// from those of the n-th weight; avoided CPUs weigh nothing (nri-plugins'
// "far from" hints are sets of free CPUs, which a balloon's CPUs are not).
// Those are released one at a time (resizeCpusOneAtATime), each the leaf
// of the type's CPU tree that resizeCpusMaxLocalSet sorts first with
// sorterRelease: level by level from the package, the fewest of the CPUs
// still to choose from, then level by level the fewest free CPUs, then the
// highest thread name. tf are the free CPUs counted per tree node.
func (ix *topoIndex) deflate(cur cpuset.Set, n int, o *allocOpts, tf *treeFree) cpuset.Set {
	if n <= 0 {
		return cpuset.Set{}
	}
	if n >= cur.Size() {
		return cur
	}
	// cur's CPUs, those picked and the flags of those taken, in the
	// index's scratch lists.
	all, picked := cur.AppendTo(ix.released[:0]), ix.picked[:0]
	defer func() { ix.released, ix.picked = all[:0], picked[:0] }()
	cands := all
	if len(o.prefer) > 0 {
		weights := make([]uint64, len(cands))
		for i, id := range cands {
			for p, set := range o.prefer {
				if set.Contains(id) {
					weights[i] += 1 << (len(o.prefer) - 1 - p)
				}
			}
		}
		sorted := slices.Clone(weights)
		slices.Sort(sorted)
		limit := sorted[n]
		maybe := cands[:0:0]
		for i, id := range cands {
			switch {
			case weights[i] < limit:
				picked = append(picked, id)
			case weights[i] == limit:
				maybe = append(maybe, id)
			}
		}
		cands = maybe
	}
	split := 0
	if o.spread {
		split = 1
	}
	sh := ix.tree.shapes[split]
	free, extra := tf[split], sh.scratch // extra: CPUs released so far
	if len(o.prefer) > 0 {
		sh.recount(cpuset.New(cands...))
	} else {
		sh.recount(cur)
	}
	keys := sh.key[:len(sh.key)-1] // see recount: no thread level
	rank := ix.tree.rank[tThread]
	taken := ix.taken[:0]
	for range cands {
		taken = append(taken, false)
	}
	defer func() { ix.taken = taken[:0] }()
	first := len(picked)
	for len(picked) < n {
		best := sh.releaseFirst(cands, taken, free, rank)
		taken[best] = true
		id := cands[best]
		picked = append(picked, id)
		for i, key := range keys {
			sh.cur[i][key[id]]--
			extra[i][key[id]]++
		}
	}
	// sh.cur counts sh.counted again, extra nothing.
	for _, id := range picked[first:] {
		for i, key := range keys {
			sh.cur[i][key[id]]++
			extra[i][key[id]] = 0
		}
	}
	return cpuset.New(picked...)
}

// releaseFirst is the index in cands of the leaf, not taken yet, that
// nri-plugins' sorterRelease puts first: level by level, the fewest of the
// CPUs to choose from (sh.cur), then level by level the fewest free CPUs
// (free, plus those released in this deflate, sh.scratch), then the highest
// thread name (rank, one per thread, so one leaf is first). Like a choice's
// keep, it keeps level by level only the candidates that tie so far, in
// plain loops: in Wasm a comparison function called per candidate cost
// more than the comparisons.
func (sh *treeShape) releaseFirst(cands []uint32, taken []bool, free [][]int32, rank []int32) int {
	keys := sh.key[:len(sh.key)-1] // see recount: no thread level
	s := sh.s1[:0]
	for i := range cands {
		if !taken[i] {
			s = append(s, int32(i))
		}
	}
	for i, key := range keys {
		if len(s) == 1 {
			break
		}
		c := sh.cur[i]
		best := c[key[cands[s[0]]]]
		out := s[:1]
		for _, k := range s[1:] {
			switch v := c[key[cands[k]]]; {
			case v == best:
				out = append(out, k)
			case v < best:
				best = v
				out = append(out[:0], k)
			}
		}
		s = out
	}
	for i, key := range keys {
		if len(s) == 1 {
			break
		}
		f, x := free[i], sh.scratch[i]
		node := key[cands[s[0]]]
		best := f[node] + x[node]
		out := s[:1]
		for _, k := range s[1:] {
			node := key[cands[k]]
			switch v := f[node] + x[node]; {
			case v == best:
				out = append(out, k)
			case v < best:
				best = v
				out = append(out[:0], k)
			}
		}
		s = out
	}
	first := s[0]
	for _, k := range s[1:] {
		if rank[cands[k]] > rank[cands[first]] {
			first = k
		}
	}
	sh.s1 = s[:0]
	return int(first)
}
