package balloons

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestTreeChoice checks inflate's node choice on n4c16 (2 packages × 2
// NUMA nodes × 2 cores × 2 threads, threads 2k and 2k+1 on one core) against
// what nri-plugins' sorterAllocate gives on the same tree. The avoided
// sets' cases (nri-plugins' preferFarFromDevices) keep the CPUs its
// ResizeCpus returns to allocate from on the same tree and free CPUs
// (4-11, 4-7,12-15 and 4-11: its cputree.go run with those hints); the
// one-step drop they replace kept every free CPU in all three and took
// 8-15's CPUs.
func TestTreeChoice(t *testing.T) {
	ix, err := newTopoIndex(policytest.Machine(t, "N4C16"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		taken string // CPUs not free, the balloon's included
		cur   string // the balloon's CPUs
		n     int
		o     allocOpts
		want  string
	}{
		{name: "packing takes a whole free core for 2", taken: "0,2,4,6,12", n: 2, want: "14-15"},
		{name: "packing grows within the balloon's core", taken: "0,2,4,6,14", cur: "14", n: 1, want: "15"},
		{name: "packing takes the fullest node, then the fullest core", taken: "0-7,9", n: 1, want: "8"},
		{name: "balancing takes the emptiest package, then node", taken: "0-6,10", n: 1, o: allocOpts{balance: true}, want: "12"},
		{name: "spreading takes one thread per core", n: 2, o: allocOpts{balance: true, spread: true}, want: "0,2"},
		{name: "spreading keeps to the balloon's thread class", taken: "0-8,10,12-15", cur: "8,10", n: 1, o: allocOpts{spread: true}, want: "11"},
		{name: "node names tie-break as strings: cpu10 before cpu8", taken: "0-7,12-15,9", n: 1, o: allocOpts{balance: true}, want: "10"},
		{name: "a resize no package holds spans the root", n: 9, want: "0-8"},
		{name: "a preferred set that holds the resize restricts it", n: 2, o: allocOpts{prefer: []cpuset.Set{cpuset.MustParse("8-11")}}, want: "10-11"},
		{name: "a preferred set too small is dropped whole", taken: "8-10", n: 2, o: allocOpts{prefer: []cpuset.Set{cpuset.MustParse("8-11")}}, want: "12-13"},
		{name: "avoided sets apply in turn: node3 goes, then node2 would leave too few", taken: "0-3", n: 5,
			o: allocOpts{avoid: []cpuset.Set{cpuset.MustParse("12-15"), cpuset.MustParse("8-11")}}, want: "4-8"},
		{name: "avoided sets apply in turn: the order decides which goes", taken: "0-3", n: 5,
			o: allocOpts{avoid: []cpuset.Set{cpuset.MustParse("8-11"), cpuset.MustParse("12-15")}}, want: "4-7,12"},
		{name: "avoided sets apply in turn: a set that would leave too few is skipped, a later one applies", taken: "0-3", n: 5,
			o: allocOpts{avoid: []cpuset.Set{cpuset.MustParse("4-11"), cpuset.MustParse("12-15")}}, want: "4-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			free := make([]bool, len(ix.cpus))
			avail, tf := ix.newCounts(), ix.tree.newFree()
			taken := cpuset.MustParse(tc.taken)
			nFree := 0
			for _, id := range ix.onlineIDs {
				if !taken.Contains(id) {
					free[id] = true
					avail.add(ix.cpus[id], 1)
					ix.tree.add(tf, id, 1)
					nFree++
				}
			}
			got, ok := ix.inflate(cpuset.MustParse(tc.cur), free, nFree, avail, tf, tc.n, &tc.o)
			if !ok || got.String() != tc.want {
				t.Errorf("inflate(%d) with %s taken, balloon %q = %s, %v; want %s", tc.n, tc.taken, tc.cur, got, ok, tc.want)
			}
			scratchZero(t, ix)
		})
	}
}

// TestTreeRelease checks deflate's choice on n4c16 against what
// nri-plugins' ResizeCpus gives for a negative delta: device (preferred
// set) weights first, then one CPU at a time the leaf sorterRelease sorts
// first. Every case but the last two picks otherwise with the scoring
// deflate had before (the least preferred tier, the node with the fewest,
// lone threads, the highest id).
func TestTreeRelease(t *testing.T) {
	ix, err := newTopoIndex(policytest.Machine(t, "N4C16"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		taken string // CPUs not free; the balloon's are added
		cur   string // the balloon's CPUs
		n     int
		o     allocOpts
		want  string
	}{
		{name: "the preferred set's CPUs stay; of the others, the package holding fewest of them goes",
			cur: "0-3,12-13", n: 1, o: allocOpts{prefer: []cpuset.Set{cpuset.MustParse("0-2")}}, want: "3"},
		{name: "avoided CPUs weigh nothing: the package with fewest goes",
			cur: "4-5,8", n: 1, o: allocOpts{avoid: []cpuset.Set{cpuset.MustParse("4")}}, want: "8"},
		{name: "between equal counts, the node with fewer free CPUs goes",
			taken: "1", cur: "0,4", n: 1, want: "0"},
		{name: "one at a time, package first: the package with fewest empties",
			cur: "0-1,4,8-9", n: 2, want: "8-9"},
		{name: "all of it", cur: "0,5", n: 2, want: "0,5"},
		{name: "the first preferred set weighs more than the second",
			cur: "0-1,8,12", n: 2, o: allocOpts{prefer: []cpuset.Set{cpuset.MustParse("8-11"), cpuset.MustParse("0-3")}}, want: "1,12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tf := ix.tree.newFree()
			notFree := cpuset.MustParse(tc.taken).Union(cpuset.MustParse(tc.cur))
			for _, id := range ix.onlineIDs {
				if !notFree.Contains(id) {
					ix.tree.add(tf, id, 1)
				}
			}
			got := ix.deflate(cpuset.MustParse(tc.cur), tc.n, &tc.o, tf)
			if got.String() != tc.want {
				t.Errorf("deflate(%d) of %s with %s taken = %s; want %s", tc.n, tc.cur, tc.taken, got, tc.want)
			}
			scratchZero(t, ix)
		})
	}
}

// scratchZero fails t unless every scratch count of the tree's shapes is
// zero again, as a choice or a deflate must leave them, and the balloon
// counts (cur) are those of the set counted, above the thread level.
func scratchZero(t *testing.T, ix *topoIndex) {
	t.Helper()
	for s, sh := range ix.tree.shapes {
		for i := range sh.levels {
			want := make([]int32, len(sh.cur[i]))
			if i < len(sh.levels)-1 {
				for id := range sh.counted.All() {
					want[sh.key[i][id]]++
				}
			}
			for k := range sh.cur[i] {
				if sh.cur[i][k] != want[k] || sh.scratch[i][k] != 0 {
					t.Fatalf("shape %d level %d node %d: counts %d, %d; want %d of %s, 0", s, i, k, sh.cur[i][k], sh.scratch[i][k], want[k], sh.counted)
				}
			}
		}
	}
}

// BenchmarkTreeChoice4096 times one inflate on Sparse4096CPU8Socket (4,080
// online CPUs) with every third CPU taken, for a balloon of 8 CPUs on one
// NUMA node growing by 1 and by 2 CPUs, packed, balanced and spread: the
// choice visits the balloon's branches and the ties, not every CPU.
func BenchmarkTreeChoice4096(b *testing.B) {
	ix, err := newTopoIndex(policytest.Machine(b, "Sparse4096CPU8Socket"))
	if err != nil {
		b.Fatal(err)
	}
	free := make([]bool, len(ix.cpus))
	avail, tf := ix.newCounts(), ix.tree.newFree()
	nFree := 0
	for i, id := range ix.onlineIDs {
		if i%3 != 0 && i >= 8 {
			free[id] = true
			avail.add(ix.cpus[id], 1)
			ix.tree.add(tf, id, 1)
			nFree++
		}
	}
	cur := cpuset.New(ix.onlineIDs[:8]...)
	for _, o := range []struct {
		name string
		o    allocOpts
	}{{"pack", allocOpts{}}, {"balance", allocOpts{balance: true}}, {"spread", allocOpts{balance: true, spread: true}}} {
		for _, n := range []int{1, 2} {
			b.Run(o.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					if _, ok := ix.inflate(cur, free, nFree, avail, tf, n, &o.o); !ok {
						b.Fatal("no CPUs")
					}
				}
			})
		}
	}
}

// releaseBefore is the reference releaseFirst is checked against, one
// comparison of two leaves: whether nri-plugins' sorterRelease puts leaf a
// before leaf b: level by level, fewer of the CPUs to choose from (sh.cur),
// then level by level fewer free CPUs (free, plus those released in this
// deflate, sh.scratch), then the higher thread name (rank).
func (sh *treeShape) releaseBefore(a, b uint32, free [][]int32, rank []int32) bool {
	keys := sh.key[:len(sh.key)-1] // see recount: no thread level
	for i, key := range keys {
		if ca, cb := sh.cur[i][key[a]], sh.cur[i][key[b]]; ca != cb {
			return ca < cb
		}
	}
	for i, key := range keys {
		fa, fb := free[i][key[a]]+sh.scratch[i][key[a]], free[i][key[b]]+sh.scratch[i][key[b]]
		if fa != fb {
			return fa < fb
		}
	}
	return rank[a] > rank[b]
}

// TestReleaseFirst: releaseFirst, which keeps the candidates that tie level
// by level, picks the leaf a scan comparing each candidate with the best so
// far (releaseBefore) picks, on random balloons, free CPUs and candidates
// already taken, in both shapes of Sparse4096CPU8Socket's tree.
func TestReleaseFirst(t *testing.T) {
	ix, err := newTopoIndex(policytest.Machine(t, "Sparse4096CPU8Socket"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(15, 2))
	rank := ix.tree.rank[tThread]
	for round := range 200 {
		tf := ix.tree.newFree()
		var cands []uint32
		for _, id := range ix.onlineIDs {
			switch r := rng.IntN(100); {
			case r < 3:
				cands = append(cands, id)
			case r < 60:
				ix.tree.add(tf, id, 1)
			}
		}
		taken := make([]bool, len(cands))
		for i := range taken {
			taken[i] = rng.IntN(4) == 0
		}
		taken[0] = false
		for split, sh := range ix.tree.shapes {
			sh.recount(cpuset.New(cands...))
			for i := range cands {
				if taken[i] { // released earlier in the deflate
					for l, key := range sh.key[:len(sh.key)-1] {
						sh.cur[l][key[cands[i]]]--
						sh.scratch[l][key[cands[i]]]++
					}
				}
			}
			want := -1
			for i, id := range cands {
				if !taken[i] && (want < 0 || sh.releaseBefore(id, cands[want], tf[split], rank)) {
					want = i
				}
			}
			if got := sh.releaseFirst(cands, taken, tf[split], rank); got != want {
				t.Fatalf("round %d, shape %d: releaseFirst = cpu%d, the scan cpu%d", round, split, cands[got], cands[want])
			}
			for i := range cands {
				if taken[i] {
					for l, key := range sh.key[:len(sh.key)-1] {
						sh.cur[l][key[cands[i]]]++
						sh.scratch[l][key[cands[i]]] = 0
					}
				}
			}
		}
	}
	scratchZero(t, ix)
}
