package topologyaware

import (
	"cmp"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
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
	switch req.kind {
	case kindPreserved:
		c.pinCPU, c.pool = false, s.pools[0]
	case kindReserved:
		if s.reservedGranted+req.milli <= s.res.reservedMilli {
			c.pool = s.reservedPool
			break
		}
		policy.Log.Warnf("container %s: %dm does not fit in the reserved CPUs (%dm of %dm granted); using shared CPUs",
			c.id, req.milli, s.reservedGranted, s.res.reservedMilli)
		c.kind = kindShared
		fallthrough
	case kindShared:
		fits := func(p *pool) bool { return p.free() >= req.milli }
		if h := s.named(hint); h != nil && fits(h) {
			c.pool = h
		} else if c.pool = s.choose(fits); c.pool == nil {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldRequest,
				"%dm of shared CPU does not fit: at most %dm is free in any pool", req.milli, s.maxFree())
		}
	case kindExclusive:
		var cpus cpuset.Set
		fits := func(iso bool) func(p *pool) bool {
			return func(p *pool) bool {
				var ok bool
				cpus, c.isolated, ok = s.pickExclusive(p, req.cores, iso)
				return ok
			}
		}
		if req.isolate {
			c.pool = s.choose(fits(true))
		}
		if c.pool == nil {
			c.pool = s.choose(fits(false))
		}
		if c.pool == nil {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldRequest,
				"%d exclusive CPUs do not fit: at most %dm of shared CPU is free in any pool", req.cores, s.maxFree())
		}
		c.cpus, c.cpusText = cpus, cpus.String()
	}
	if req.pinMems {
		c.mems = c.pool.memsText
	}
	s.add(c)
	return c, nil
}

// choose returns the pool a container goes to: of the pools where fits holds,
// the deepest, then the one with the most free shared capacity, then the
// lowest id. fits is tried in that order, so the last call is the chosen pool.
func (s *state) choose(fits func(*pool) bool) *pool {
	order := slices.Clone(s.pools)
	free := make([]int64, len(s.pools))
	for _, p := range s.pools {
		free[p.id] = p.free()
	}
	slices.SortFunc(order, func(a, b *pool) int {
		return cmp.Or(cmp.Compare(b.depth, a.depth), cmp.Compare(free[b.id], free[a.id]), cmp.Compare(a.id, b.id))
	})
	for _, p := range order {
		if fits(p) {
			return p
		}
	}
	return nil
}

// pickExclusive picks n exclusive CPUs in p: from its free isolated CPUs when
// iso, else sliced off its shared CPUs without leaving any pool with less
// shared capacity than its containers were granted.
func (s *state) pickExclusive(p *pool, n int, iso bool) (cpuset.Set, bool, bool) {
	if iso {
		set, ok := s.ix.pick(p.isolated.Difference(s.exclusive), n, nil)
		return set, true, ok
	}
	if p.free() < 1000*int64(n) {
		return cpuset.Set{}, false, false
	}
	b := &budget{slack: map[int]int64{}, chain: func(cpu uint32) []int {
		var ids []int
		for q := s.leaf[cpu]; q != nil && q != p; q = q.parent {
			ids = append(ids, q.id)
		}
		return ids
	}}
	for _, q := range s.pools {
		if q != p && p.contains(q) {
			b.slack[q.id] = q.slack()
		}
	}
	set, ok := s.ix.pick(p.shared, n, b)
	return set, false, ok
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

// maxFree is the most free shared capacity of any pool, for error messages.
func (s *state) maxFree() int64 {
	var m int64
	for _, p := range s.pools {
		m = max(m, p.free())
	}
	return m
}
