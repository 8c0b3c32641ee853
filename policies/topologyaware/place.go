package topologyaware

import (
	"cmp"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

const fieldRequest = "container.resources.cpu_request_milli"

// place decides where a new container goes and records it.
func (s *state) place(pod *abi.PodSandbox, spec *abi.Container) (*container, error) {
	return s.placeNear(pod, spec, "")
}

// placeNear is place that keeps a shared container in the pool named hint
// when it still fits there (a reconfiguration does not move it needlessly).
func (s *state) placeNear(pod *abi.PodSandbox, spec *abi.Container, hint string) (*container, error) {
	req := s.cfg.classify(pod, spec)
	c := &container{id: strings.Clone(spec.GetId()), pod: pod, spec: spec, kind: req.kind, milli: req.milli, pinCPU: s.cfg.PinCPU}
	c.hideHT, _ = boolAnnotation(pod, spec, containers.KeyHideHyperthreads)
	if hint == "" {
		warnUnimplemented(pod, spec)
	}
	claims, err := s.claimsOf(spec)
	if err != nil {
		return nil, err
	}
	kinds := s.ix.memKindsOf(pod, spec)
	affs, err := s.cfg.affinities(pod, spec)
	if err != nil {
		return nil, err
	}
	// byAffinity is an order with the pools c has affinity to first, then
	// by hints, then by the memory offers.
	// Topology hints come right after affinity (nri-plugins' compareScores).
	hints := s.hintsOf(pod, spec)
	// Then the memory offer (its failure, its kinds) and memory limits;
	// past CPU burstability the tighter offer, then the memory kinds
	// (nri-plugins' order).
	m := s.newMemChoice(pod, spec, kinds)
	byAffinity := func(next order) order {
		return s.withHints(hints, m.withOffer(s.withMemLimit(spec, kinds, next)))
	}
	if byPool, some := s.poolAffinities(affs, c.id); some {
		scores := s.affinityScores(byPool)
		byAffinity = func(next order) order {
			return withAffinity(scores, s.withHints(hints, m.withOffer(s.withMemLimit(spec, kinds, next))))
		}
	}
	tighter := func(next order) order { return m.withTighter(s.withMemKinds(kinds, next)) }
	if len(claims) > 0 {
		s.holdClaims(c, claims, req.pinMems)
		if err := s.shareWith(c, req.pinMems); err != nil {
			return nil, err
		}
		s.add(c)
		return c, nil
	}
	switch req.kind {
	case kindPreserved:
		c.pinCPU, c.pool = false, s.pools[0]
	case kindReserved:
		// The reserved CPUs are not chosen by hints (nri-plugins checks
		// only whether a strict hint holds them).
		if s.reservedGranted+req.milli <= s.res.reservedMilli {
			c.pool = s.reservedPool
			break
		}
		// nri-plugins sends reserved requests to the root pool, whose
		// fallback is its shared CPUs (pools.go allocatePool).
		policy.Log.Warnf("container %s: %dm does not fit in the reserved CPUs (%dm of %dm granted); using the root pool's shared CPUs",
			c.id, req.milli, s.reservedGranted, s.res.reservedMilli)
		c.kind, c.pool = kindShared, s.pools[0]
		if c.pool.free() < req.milli {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldRequest,
				"%dm fits neither in the reserved CPUs (%dm of %dm granted) nor in the root pool's shared CPUs (%dm free)",
				req.milli, s.reservedGranted, s.res.reservedMilli, c.pool.free())
		}
	case kindShared:
		fits := func(p *pool) bool { return p.free() >= req.milli }
		if h := s.named(hint); h != nil && fits(h) {
			c.pool = h
		} else if c.pool = s.choose(fits, byAffinity(s.sharedOrder(pod, spec, tighter(s.withPrio(req, byCount))))); c.pool == nil && c.kind == kindShared && spec.GetResources().GetCpuRequestMilli() == 0 {
			// No shared CPU is left anywhere: a container that requests
			// no CPU still starts, unpinned until shared CPUs come back,
			// as nri-plugins leaves a grant with an empty cpuset
			// (pools.go applyGrant).
			policy.Log.Warnf("container %s: no shared CPUs are left; it runs unpinned until some are", c.id)
			c.pool, c.milli = s.pools[0], 0
		} else if c.pool == nil {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldRequest,
				"%dm of shared CPU does not fit: at most %dm is free in any pool", req.milli, s.maxFree())
		}
	case kindExclusive, kindMixed:
		var cpus cpuset.Set
		extra := int64(0)
		if req.kind == kindMixed {
			extra = req.milli
		}
		fits := func(iso bool) func(p *pool) bool {
			return func(p *pool) bool {
				var ok bool
				cpus, c.isolated, ok = s.pickExclusive(p, req.cores, iso, extra, req.prio)
				return ok
			}
		}
		// Try the isolated CPUs only when enough are free anywhere: a
		// try that fails walks every pool (153 on the 4,096-CPU fixture).
		if req.isolate && s.res.isolated.Difference(s.exclusive).Size() >= req.cores {
			c.pool = s.choose(fits(true), byAffinity(tighter(s.withPrio(req, byCapacity))))
		}
		if c.pool == nil && req.requireIsolated {
			// nri-plugins: resources.go verifyStrictCPUPreferences.
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldRequest,
				"%s: %d isolated CPUs required, at most %d free in any pool", keyRequireIsolated, req.cores, s.maxFreeIsolated())
		}
		if c.pool == nil {
			c.pool = s.choose(fits(false), byAffinity(tighter(s.withPrio(req, byCapacity))))
		}
		if c.pool == nil {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldRequest,
				"%d exclusive CPUs (and %dm shared) do not fit: at most %dm of shared CPU is free in any pool", req.cores, extra, s.maxFree())
		}
		c.cpus, c.cpusText = cpus, cpus.String()
	}
	if err := m.takeOffer(c, c.pool, req.pinMems); err != nil {
		return nil, err
	}
	if err := s.verifyStrictHints(pod, spec, c, hints); err != nil {
		return nil, err
	}
	m.takeMoves(c.pool)
	s.add(c)
	return c, nil
}

// verifyStrictHints refuses a placement that does not honour every hint of a
// container annotated strict.topologyhints (nri-plugins:
// verifyStrictTopologyHints): its shared, reserved and exclusive CPUs and its
// memory nodes must lie where each hint says. As in nri-plugins, the choice
// is not retried elsewhere: the best pool failing means none fits.
func (s *state) verifyStrictHints(pod *abi.PodSandbox, spec *abi.Container, c *container, hints []hint) error {
	if len(hints) == 0 || c.kind == kindPreserved {
		return nil
	}
	if strict, _ := boolAnnotation(pod, spec, keyStrictTopologyHints); !strict {
		return nil
	}
	var cpus cpuset.Set
	switch c.kind {
	case kindShared:
		cpus = c.pool.sharedSet()
	case kindMixed:
		cpus = c.pool.sharedSet().Difference(c.cpus).Union(c.cpus)
	case kindReserved:
		cpus = s.res.reserved
	default:
		cpus = c.cpus
	}
	var mems cpuset.Set
	if c.mems != "" {
		mems, _ = cpuset.Parse(c.mems)
	}
	for _, h := range hints {
		if badCPUs, badMems := s.misaligned(h, cpus, mems); !badCPUs.IsEmpty() || !badMems.IsEmpty() {
			return abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.annotations["+keyStrictTopologyHints+"]",
				"pool %s fails the strict topology hint of %s (CPUs %s, nodes %s): CPUs %s and memory nodes %s lie outside it",
				c.pool.name, h.provider, h.cpus, h.numas, badCPUs, badMems)
		}
	}
	return nil
}

// order compares two pools for a container: negative when a is tried
// before b. free is each pool's free shared capacity, by pool id.
type order func(a, b *pool, free []int64) int

// byCapacity is nri-plugins' order for exclusive CPUs (pools.go
// compareScores): the deepest pool, then the most free shared capacity,
// then the lowest id.
func byCapacity(a, b *pool, free []int64) int {
	if a.depth != b.depth {
		return cmp.Compare(b.depth, a.depth)
	}
	if free[a.id] != free[b.id] {
		return cmp.Compare(free[b.id], free[a.id])
	}
	return cmp.Compare(a.postID, b.postID)
}

// byCount is nri-plugins' order for shared CPUs: the deepest pool, then the
// fewest containers placed in it, then the most free shared capacity, then
// the lowest id.
func byCount(a, b *pool, free []int64) int {
	if a.depth != b.depth {
		return cmp.Compare(b.depth, a.depth)
	}
	if a.colocated != b.colocated {
		return cmp.Compare(a.colocated, b.colocated)
	}
	return byCapacity(a, b, free)
}

// sharedOrder is the order of pools for a shared container: byCount (the
// given order, byCount itself or byCount by CPU priority); for a
// Burstable container with a CPU limit, the pools with free capacity for the
// limit first; for one without a CPU limit, the pools at the
// unlimitedBurstable level (or that of the unlimited-burstable annotation) first (most free capacity, then lowest id), then
// those below it, then those above, by id (nri-plugins: pools.go
// compareScores, "CPU burstability").
func (s *state) sharedOrder(pod *abi.PodSandbox, spec *abi.Container, byCount order) order {
	if qosOf(pod, spec) != abi.QOSClass_QOS_CLASS_BURSTABLE {
		return byCount
	}
	if limit := spec.GetResources().GetCpuLimitMilli(); limit != 0 {
		// A pool with shared capacity for the limit wins ("CPU
		// burstability"); capacity counts its shared CPUs less what
		// shared containers were granted.
		return func(a, b *pool, free []int64) int {
			if fa, fb := free[a.id] >= limit, free[b.id] >= limit; fa != fb {
				return first(fa)
			}
			return byCount(a, b, free)
		}
	}
	target := s.burstableLevel
	if v, ok := effectiveAnnotation(pod, spec, keyUnlimitedBurstable); ok {
		if lv, known := levelByName(v); known {
			target = s.existingLevel(lv)
		} else {
			policy.Log.Warnf("container %s: ignoring annotation %s=%q: want system, package, die, numa or l3cache", spec.GetId(), keyUnlimitedBurstable, v)
		}
	}
	return func(a, b *pool, free []int64) int {
		la, lb := a.topologyLevel(), b.topologyLevel()
		if (la == target) != (lb == target) {
			return first(la == target)
		}
		if la == target {
			if free[a.id] != free[b.id] {
				return cmp.Compare(free[b.id], free[a.id])
			}
		} else if (la > target) != (lb > target) {
			return first(la > target)
		}
		return cmp.Compare(a.postID, b.postID)
	}
}

// first is -1 when a goes first, 1 when b does.
func first(a bool) int {
	if a {
		return -1
	}
	return 1
}

// choose returns the pool a container goes to: the first in order where fits
// holds. fits is tried in that order, so the last call is the chosen pool.
// The pools are not sorted: the first in order usually fits, so each try
// takes the least of those left: one pass over the pools, where an
// insertion sort of the 153 pools of a 4,096-CPU machine with L3 pools is
// thousands of comparisons. Every order ends on the pool id, so the least
// is unique.
func (s *state) choose(fits func(*pool) bool, cmpPools order) *pool {
	if len(s.free) != len(s.pools) {
		s.free = make([]int64, len(s.pools))
	}
	free := s.free
	for _, p := range s.pools {
		free[p.id] = p.free()
	}
	left := append(s.left[:0], s.pools...) // the pools outlive it: no need to clear
	s.left = left
	for len(left) > 0 {
		best := 0
		for i := 1; i < len(left); i++ {
			if cmpPools(left[i], left[best], free) < 0 {
				best = i
			}
		}
		if p := left[best]; fits(p) {
			return p
		}
		left[best] = left[len(left)-1]
		left = left[:len(left)-1]
	}
	return nil
}

// pickExclusive picks n exclusive CPUs in p: from its free isolated CPUs when
// iso, else sliced off its shared CPUs without leaving any pool with less
// shared capacity than its containers were granted, and extra milli-CPU of
// shared capacity to spare in p (a mixed grant's fraction), by CPU priority
// prio.
func (s *state) pickExclusive(p *pool, n int, iso bool, extra int64, prio cpuPrio) (cpuset.Set, bool, bool) {
	if iso {
		if p.free() < extra {
			return cpuset.Set{}, true, false
		}
		set, ok := s.ix.pickPrio(p.isolated.Difference(s.exclusive), n, nil, prio)
		return set, true, ok
	}
	if p.free() < 1000*int64(n)+extra {
		return cpuset.Set{}, false, false
	}
	set, ok := s.ix.pickPrio(s.sliceable(p), n, s.budgetBelow(p), prio)
	return set, false, ok
}

// sliceable is what exclusive CPUs of p are cut from (nri-plugins'
// SliceableCPUs): for every pool below p (p itself when it is a leaf), the
// whole CPUs its free shared capacity covers, as the allocator would pick
// them from its shared CPUs. Where shared containers hold capacity, this
// leaves out the CPUs the allocator would give up last, so an exclusive
// grant lands on a core the shared containers already split rather than on
// the lowest free one.
func (s *state) sliceable(p *pool) cpuset.Set {
	if len(p.children) == 0 {
		return s.coveredShared(p)
	}
	var out cpuset.Set
	var walk func(q *pool)
	walk = func(q *pool) {
		for _, c := range q.children {
			out = out.Union(s.coveredShared(c))
			walk(c)
		}
	}
	walk(p)
	return out
}

// coveredShared is the allocator's pick of as many of q's shared CPUs as its
// free shared capacity covers in whole CPUs: all of them when nothing is
// granted.
func (s *state) coveredShared(q *pool) cpuset.Set {
	shared := q.sharedSet()
	keep := q.freeWhole()
	if keep >= shared.Size() {
		return shared
	}
	set, _ := s.ix.pick(shared, keep, nil)
	return set
}

// budgetBelow limits a pick to what the pools strictly below top can spare
// (every pool when top is nil): p.free() covers top and its ancestors.
func (s *state) budgetBelow(top *pool) *budget {
	b := &budget{leaf: s.leaf, top: top, slack: make([]int64, len(s.pools)), need: make([]int64, len(s.pools))}
	for _, q := range s.pools {
		b.slack[q.id] = q.slack()
	}
	return b
}

// named is the pool called name, nil when there is none.
func (s *state) named(name string) *pool {
	for _, p := range s.pools {
		if p.name == name {
			return p
		}
	}
	return nil
}

// maxFreeIsolated is the most free isolated CPUs of any pool, for error
// messages.
func (s *state) maxFreeIsolated() int {
	m := 0
	for _, p := range s.pools {
		m = max(m, p.isolated.Difference(s.exclusive).Size())
	}
	return m
}

// maxFree is the most free shared capacity of any pool, for error messages.
func (s *state) maxFree() int64 {
	var m int64
	for _, p := range s.pools {
		m = max(m, p.free())
	}
	return m
}
