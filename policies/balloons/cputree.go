package balloons

import (
	"slices"
	"strconv"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/topology"
)

// The levels of nri-plugins' balloons CPU tree (cmd/plugins/balloons/policy
// cputree.go, NewCpuTreeFromSystem and SplitLevel), from the root down.
// tClass is there only in the tree of a type that prefers spreading on
// physical cores: each NUMA node split into one class per thread sibling
// index, the levels below holding that class's threads only.
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

// cpuTree places every online CPU in nri-plugins' CPU tree, so that a
// resize can pick its tree node the way nri-plugins' resizeCpusMaxLocalSet
// does (RATIONALE.md, "CPU choice").
type cpuTree struct {
	// keys[split][id][lvl] is CPU id's node at lvl, an index into the
	// counts; -1 where the CPU has no node at lvl (no L2 cache; no class
	// level in the plain tree). split 1 is the spread tree.
	keys [2][][tLevels]int32
	// rank[lvl][id] is the order of the name nri-plugins gives CPU id's
	// node at lvl, its last tie-break.
	rank [tLevels][]int32
	// free and cur count, per level and node, the candidate CPUs and the
	// balloon's CPUs during one choice (zero between choices).
	free, cur [tLevels][]int32
}

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
	tr := &cpuTree{}
	// sibling index of each thread in its core, threads per core at most
	sib := make([]int32, size)
	width := int32(1)
	for _, threads := range ix.cores {
		sorted := slices.Clone(threads)
		slices.Sort(sorted)
		for i, id := range sorted {
			sib[id] = int32(i)
		}
		width = max(width, int32(len(sorted)))
	}
	nodeKeys := map[[2]int32]int32{} // (die, node) → node key
	names := [tLevels][]string{}
	for l := range names {
		names[l] = make([]string, size)
	}
	for s := range tr.keys {
		tr.keys[s] = make([][tLevels]int32, size)
	}
	for _, id := range ids {
		c, _ := kit.CPU(id)
		info := ix.cpus[id]
		nk, ok := nodeKeys[[2]int32{info.die, info.node}]
		if !ok {
			nk = int32(len(nodeKeys))
			nodeKeys[[2]int32{info.die, info.node}] = nk
		}
		l2, split := int32(-1), int32(-1)
		if info.l2 >= 0 {
			l2, split = info.l2, info.l2*width+sib[id]
		}
		tr.keys[0][id] = [tLevels]int32{info.pkg, info.die, nk, -1, l2, info.core, int32(id)}
		tr.keys[1][id] = [tLevels]int32{info.pkg, info.die, nk, nk*width + sib[id], split, info.core*width + sib[id], int32(id)}
		pkg := "p" + strconv.Itoa(int(c.Package))
		die := pkg + "d" + strconv.Itoa(int(c.Die))
		node := die + "n" + strconv.Itoa(int(c.Node))
		core := node + "cpu" + strconv.Itoa(int(c.Core))
		names[tPkg][id], names[tDie][id], names[tNode][id] = pkg, die, node
		names[tClass][id] = node + "class" + strconv.Itoa(int(sib[id]))
		if info.l2 >= 0 {
			for _, cid := range c.CacheIDs {
				if sid, ok := l2SysfsID[cid]; ok {
					names[tL2][id] = node + "$" + strconv.Itoa(int(sid))
				}
			}
		}
		names[tCore][id] = core
		names[tThread][id] = core + "t" + strconv.Itoa(int(id))
	}
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
	dims := [tLevels]int{ix.dims.pkg, ix.dims.die, len(nodeKeys), len(nodeKeys) * int(width), max(ix.dims.l2, 1) * int(width), ix.dims.core * int(width), size}
	for l, d := range dims {
		tr.free[l], tr.cur[l] = make([]int32, d), make([]int32, d)
	}
	return tr
}

// count adds d for each of ids to counts (free or cur) in the split or
// plain tree.
func (tr *cpuTree) count(counts *[tLevels][]int32, split int, ids []uint32, d int32) {
	for _, id := range ids {
		for l, k := range tr.keys[split][id] {
			if k >= 0 {
				counts[l][k] += d
			}
		}
	}
}

// choose is the tree node a balloon holding cur grows n CPUs in, among
// the candidate CPUs cands, as nri-plugins' resizeCpusMaxLocalSet sorts
// them with sorterAllocate: the deepest node with n candidates; then,
// level by level from the root, the most of the balloon's CPUs; then,
// level by level, the most candidates (balance) or the fewest (packing);
// then the lowest name. It returns that node's candidates, appended to
// out; all of cands when no package holds n of them (the tree's root).
func (tr *cpuTree) choose(out, cands []uint32, cur cpuset.Set, n int, o *allocOpts) []uint32 {
	split := 0
	if o.spread {
		split = 1
	}
	keys := tr.keys[split]
	tr.count(&tr.free, split, cands, 1)
	for id := range cur.All() {
		for l, k := range keys[id] {
			if k >= 0 {
				tr.cur[l][k]++
			}
		}
	}
	better := func(a, b uint32, lvl int) bool {
		ka, kb := &keys[a], &keys[b]
		for l := 0; l <= lvl; l++ {
			if ka[l] < 0 || kb[l] < 0 {
				continue
			}
			if ca, cb := tr.cur[l][ka[l]], tr.cur[l][kb[l]]; ca != cb {
				return ca > cb
			}
		}
		for l := 0; l <= lvl; l++ {
			if ka[l] < 0 || kb[l] < 0 {
				continue
			}
			if fa, fb := tr.free[l][ka[l]], tr.free[l][kb[l]]; fa != fb {
				if o.balance {
					return fa > fb
				}
				return fa < fb
			}
		}
		return tr.rank[lvl][a] < tr.rank[lvl][b]
	}
	best, lvl := -1, tThread
	for ; lvl >= tPkg && best < 0; lvl-- {
		for _, id := range cands {
			k := keys[id][lvl]
			if k < 0 || int(tr.free[lvl][k]) < n {
				continue
			}
			if best < 0 || better(id, uint32(best), lvl) {
				best = int(id)
			}
		}
	}
	tr.count(&tr.free, split, cands, -1)
	for id := range cur.All() {
		for l, k := range keys[id] {
			if k >= 0 {
				tr.cur[l][k] = 0
			}
		}
	}
	if best < 0 { // the root: no package holds n of them
		return append(out, cands...)
	}
	lvl++
	k := keys[best][lvl]
	for _, id := range cands {
		if keys[id][lvl] == k {
			out = append(out, id)
		}
	}
	return out
}
