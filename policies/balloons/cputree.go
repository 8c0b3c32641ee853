package balloons

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/topology"
)

// The levels of nri-plugins' balloons CPU tree (cmd/plugins/balloons/policy
// cputree.go, NewCpuTreeFromSystem and SplitLevel), from the root's
// children down. tClass is there only in the tree of a type that prefers
// spreading on physical cores: each NUMA node split into one branch per
// thread sibling index, the levels below holding that branch's threads.
const (
	tPkg = iota
	tDie
	tNode
	tClass
	tL2
	tCore
	tThread
	tLevels
)

// cpuTree is nri-plugins' CPU tree of the online CPUs, in its two shapes
// (plain, and split for spreading), so that a resize picks its tree node
// the way nri-plugins' resizeCpusMaxLocalSet does (RATIONALE.md, "CPU
// choice").
type cpuTree struct {
	shapes [2]*treeShape // plain, split
	// rank[lvl][id] is the order of the name nri-plugins gives CPU id's
	// node at lvl: its last tie-break.
	rank [tLevels][]int32
}

// treeShape is one shape of the tree. Nodes are numbered depth-first at
// each level, so a node's CPUs are a range of order and its children a
// range of the next level's nodes.
type treeShape struct {
	// levels are the tree's levels (tPkg … tThread), without tClass in the
	// plain shape and without tL2 where a CPU has no L2 cache.
	levels []int
	// key[i][id] is CPU id's node at levels[i].
	key [][]int32
	// order are the CPUs depth-first; node k of levels[i] holds
	// order[lo[i][k]:lo[i][k+1]].
	order []uint32
	lo    [][]int32
	// scratch counts the candidate CPUs per node when hints restrict them,
	// zero between choices; cur counts the CPUs of counted, the set a
	// choice or a deflate last looked at, above the thread level (recount).
	scratch, cur [][]int32
	counted      cpuset.Set
	// s1, s2 are the choice's lists of surviving nodes.
	s1, s2 []int32
}

// treeFree counts the free CPUs per node of both shapes; the state keeps
// it with its free CPUs.
type treeFree [2][][]int32

// newCPUTree builds the tree of the online CPUs. Node names follow
// nri-plugins': package pP, die pPdD, NUMA node pPdDnN, class
// pPdDnNclassS, L2 cache pPdDnN$ID, core pPdDnNcpuC (C the core's lowest
// thread) and thread pPdDnNcpuCtT.
func newCPUTree(ix *topoIndex, kit *topology.Index, t *abi.Topology) *cpuTree {
	l2SysfsID := map[uint32]uint32{} // L2 caches' sysfs ids, by cache id
	for _, c := range t.GetCaches() {
		if c.GetLevel() == 2 {
			l2SysfsID[c.GetId()] = c.GetSysfsId()
		}
	}
	ids := ix.onlineIDs
	size := int(kit.MaxID()) + 1
	sib := make([]int32, size) // each thread's index among its core's
	for _, threads := range ix.cores {
		sorted := slices.Clone(threads)
		slices.Sort(sorted)
		for i, id := range sorted {
			sib[id] = int32(i)
		}
	}
	hasL2 := true
	names := [tLevels][]string{}
	for l := range names {
		names[l] = make([]string, size)
	}
	for _, id := range ids {
		c, _ := kit.CPU(id)
		hasL2 = hasL2 && ix.cpus[id].l2 >= 0
		pkg := "p" + strconv.Itoa(int(c.Package))
		die := pkg + "d" + strconv.Itoa(int(c.Die))
		node := die + "n" + strconv.Itoa(int(c.Node))
		names[tPkg][id], names[tDie][id], names[tNode][id] = pkg, die, node
		names[tClass][id] = node + "class" + strconv.Itoa(int(sib[id]))
		for _, cid := range c.CacheIDs {
			if sid, ok := l2SysfsID[cid]; ok {
				names[tL2][id] = node + "$" + strconv.Itoa(int(sid))
			}
		}
		names[tCore][id] = node + "cpu" + strconv.Itoa(int(c.Core))
		names[tThread][id] = names[tCore][id] + "t" + strconv.Itoa(int(id))
	}
	tr := &cpuTree{}
	for l := range names {
		sorted := make([]string, 0, len(ids))
		for _, id := range ids {
			sorted = append(sorted, names[l][id])
		}
		slices.Sort(sorted)
		sorted = slices.Compact(sorted)
		tr.rank[l] = make([]int32, size)
		for _, id := range ids {
			r, _ := slices.BinarySearch(sorted, names[l][id])
			tr.rank[l][id] = int32(r)
		}
	}
	for split := range tr.shapes {
		levels := []int{tPkg, tDie, tNode}
		if split == 1 {
			levels = append(levels, tClass)
		}
		if hasL2 {
			levels = append(levels, tL2)
		}
		levels = append(levels, tCore, tThread)
		path := func(id uint32, l int) int32 {
			c := ix.cpus[id]
			switch l {
			case tPkg:
				return c.pkg
			case tDie:
				return c.die
			case tNode:
				return c.node
			case tClass:
				return sib[id]
			case tL2:
				return c.l2
			case tCore:
				return c.core
			}
			return int32(id)
		}
		order := slices.Clone(ids)
		slices.SortFunc(order, func(a, b uint32) int {
			for _, l := range levels {
				if d := cmp.Compare(path(a, l), path(b, l)); d != 0 {
					return d
				}
			}
			return 0
		})
		sh := &treeShape{levels: levels, order: order}
		for i := range levels {
			key := make([]int32, size)
			var lo []int32
			for j, id := range order {
				// a new node where the path down to this level changes
				if j == 0 || slices.ContainsFunc(levels[:i+1], func(l int) bool { return path(id, l) != path(order[j-1], l) }) {
					lo = append(lo, int32(j))
				}
				key[id] = int32(len(lo) - 1)
			}
			sh.key = append(sh.key, key)
			sh.lo = append(sh.lo, append(lo, int32(len(order))))
			sh.scratch = append(sh.scratch, make([]int32, len(lo)))
			sh.cur = append(sh.cur, make([]int32, len(lo)))
		}
		tr.shapes[split] = sh
	}
	return tr
}

// newFree is a count of no free CPU.
func (tr *cpuTree) newFree() *treeFree {
	f := &treeFree{}
	for s, sh := range tr.shapes {
		for i := range sh.levels {
			f[s] = append(f[s], make([]int32, len(sh.lo[i])-1))
		}
	}
	return f
}

// add counts CPU id d more times free.
func (tr *cpuTree) add(f *treeFree, id uint32, d int32) {
	for s, sh := range tr.shapes {
		for i, key := range sh.key {
			f[s][i][key[id]] += d
		}
	}
}

// nodeCPUs appends to out the CPUs of node k at sh.levels[i] (k -1: the
// root, every CPU) that isFree tells are candidates.
func (sh *treeShape) nodeCPUs(out []uint32, i int, k int32, isFree []bool) []uint32 {
	ids := sh.order
	if k >= 0 {
		ids = ids[sh.lo[i][k]:sh.lo[i][k+1]]
	}
	for _, id := range ids {
		if isFree[id] {
			out = append(out, id)
		}
	}
	return out
}

// choose is the node a balloon holding cur grows n CPUs in, given free,
// the candidate CPUs per node, as nri-plugins' resizeCpusMaxLocalSet sorts
// the tree's nodes with sorterAllocate: the deepest node with n candidates;
// then, level by level from the top, the most of the balloon's CPUs; then,
// level by level, the most candidates (balance) or the fewest (packing);
// then the lowest name. It answers the node's level (an index of levels)
// and number; ok is false when no package holds n candidates (the tree's
// root, every candidate). Comparing level by level keeps only the nodes
// that tie so far, so a choice visits the balloon's branches and the ties,
// not every CPU.
func (tr *cpuTree) choose(sh *treeShape, free [][]int32, cur cpuset.Set, n int, balance bool) (int, int32, bool) {
	last := len(sh.levels) - 1
	depth := -1
	if n == 1 {
		depth = last
	}
	for i := last - 1; i >= 0 && depth < 0; i-- {
		for _, f := range free[i] {
			if int(f) >= n {
				depth = i
				break
			}
		}
	}
	if depth < 0 {
		return 0, 0, false
	}
	q := qualify{sh: sh, free: free, depth: depth, n: int32(n)}
	sh.recount(cur)
	s := sh.s1[:0]
	for k := range free[0] {
		if q.ok(0, int32(k)) {
			s = append(s, int32(k))
		}
	}
	// one is the deepest level where a single node survived: every later
	// survivor lies below it, so comparing counts at that level or above
	// keeps them all and is skipped.
	i, one := 0, -1
	for {
		s = sh.keep(s, sh.cur, i, i, true)
		if len(s) == 1 {
			one = i
		}
		if i == depth || sh.cur[i][s[0]] == 0 {
			break // below, the survivors hold none of the balloon's CPUs
		}
		s = sh.children(s, i, &q)
		i++
	}
	for j := one + 1; j <= i; j++ {
		s = sh.keep(s, free, j, i, balance)
	}
	for i < depth {
		s = sh.children(s, i, &q)
		i++
		s = sh.keep(s, free, i, i, balance)
	}
	rank := tr.rank[sh.levels[depth]]
	best := s[0]
	for _, k := range s[1:] {
		if rank[sh.order[sh.lo[depth][k]]] < rank[sh.order[sh.lo[depth][best]]] {
			best = k
		}
	}
	sh.s1 = s[:0]
	return depth, best, true
}

// recount makes sh.cur count cur's CPUs per node, from the counts of the
// set counted before: the CPUs that left it are taken off, those that joined
// it added. Most choices are about the balloon of the choice before, grown
// or shrunk by a CPU or two, so this touches those CPUs only where counting
// anew touched all of the balloon's CPUs twice (to count, then to zero),
// level by level (RATIONALE.md, "Why keep the tree's counts of a
// balloon?"). The thread level is left out: a choice compares threads that
// are candidates, free CPUs, which no balloon holds, and a deflate's
// candidates are one thread each, so their counts there never differ.
func (sh *treeShape) recount(cur cpuset.Set) {
	keys := sh.key[:len(sh.key)-1]
	for id, joined := range sh.counted.Changes(cur) {
		d := int32(-1)
		if joined {
			d = 1
		}
		for i, key := range keys {
			sh.cur[i][key[id]] += d
		}
	}
	sh.counted = cur
}

// qualify tells which nodes hold a node at depth with n candidates.
type qualify struct {
	sh    *treeShape
	free  [][]int32
	depth int
	n     int32
}

// ok tells whether node k at level i holds a node at depth with n
// candidates: the nodes below it at depth are a range of numbers.
func (q *qualify) ok(i int, k int32) bool {
	if q.n == 1 || i == q.depth {
		return q.free[i][k] >= q.n
	}
	sh := q.sh
	first, end := sh.key[q.depth][sh.order[sh.lo[i][k]]], sh.key[q.depth][sh.order[sh.lo[i][k+1]-1]]+1
	for _, f := range q.free[q.depth][first:end] {
		if f >= q.n {
			return true
		}
	}
	return false
}

// keep filters s, nodes at level i, to those whose node at level j has the
// most (most) or the fewest counts in counts, in one pass: a better count
// restarts the kept list. Plain loops: in Wasm a call through a function
// value costs more than the comparison.
func (sh *treeShape) keep(s []int32, counts [][]int32, j, i int, most bool) []int32 {
	c, key, order, lo := counts[j], sh.key[j], sh.order, sh.lo[i]
	best := c[key[order[lo[s[0]]]]]
	out := s[:1]
	for _, k := range s[1:] {
		switch v := c[key[order[lo[k]]]]; {
		case v == best:
			out = append(out, k)
		case most && v > best || !most && v < best:
			best = v
			out = append(out[:0], k)
		}
	}
	return out
}

// children are the qualifying children of the nodes s at level i, in the
// other of the two survivor lists.
func (sh *treeShape) children(s []int32, i int, q *qualify) []int32 {
	out := sh.s2[:0]
	next := sh.lo[i+1]
	// Where a child qualifies by its own count (one CPU, or the depth
	// itself), the count is read here: a call per child costs more.
	direct, f := q.n == 1 || i+1 == q.depth, q.free[i+1]
	for _, k := range s {
		end := sh.lo[i][k+1]
		for c := sh.key[i+1][sh.order[sh.lo[i][k]]]; c < int32(len(next)-1) && next[c] < end; c++ {
			if direct && f[c] >= q.n || !direct && q.ok(i+1, c) {
				out = append(out, c)
			}
		}
	}
	sh.s1, sh.s2 = out, s
	return out
}
