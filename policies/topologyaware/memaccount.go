package topologyaware

import (
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const fieldMemRequest = "container.resources.memory_request_bytes"

// memSize is what a container's memory is accounted as: its request, else
// its limit (nri-plugins' MemAmountToAllocate).
func memSize(spec *abi.Container) int64 {
	r := spec.GetResources()
	if q := r.GetMemoryRequestBytes(); q > 0 {
		return q
	}
	return max(r.GetMemoryLimitBytes(), 0)
}

// accounted tells whether c's memory counts in the zones: every container
// the policy placed or adopted into a pool, but not one kept as it was
// (fixed) nor a claim holder (its memory follows its claims).
func (c *container) accounted() bool {
	return c.pool != nil && c.kind != kindFixed && c.kind != kindClaim
}

// account assigns c's memory to its zone: the one its placement chose, else
// the nodes of its cpuset_mems (a restored or carried-over container keeps
// them), else its pool's nodes of its kinds.
func (s *state) account(c *container) {
	if !c.accounted() || s.mem.off {
		return
	}
	if c.memKinds == 0 {
		c.memKinds = s.ix.defaultKinds()
	}
	if c.memZone == 0 && c.mems != "" {
		if mems, err := cpuset.Parse(c.mems); err == nil {
			c.memZone = maskOf(mems.Sorted()) & s.mem.all
		}
	}
	if c.memZone == 0 {
		c.memZone = s.mem.initialZone(c.pool.memMask&s.mem.byKinds(c.memKinds), c.memKinds)
	}
	r := &memReq{id: c.id, size: memSize(c.spec), kinds: c.memKinds, prio: memPrio(qosOf(c.pod, c.spec)), seq: c.memSeq}
	s.mem.add(r, c.memZone)
	c.memSeq = r.seq
}

// memChoice is one decision's memory offers, one per distinct set of pool
// memory nodes (a node's L3 pools, a socket of one node share theirs), all
// computed when the decision starts: the pool order looks at every pool.
type memChoice struct {
	s   *state
	req memReq
	// uniform: every offer holds and is of the kinds asked for, so the
	// offers' failures and kinds order nothing.
	uniform bool
}

func (s *state) newMemChoice(pod *abi.PodSandbox, spec *abi.Container, kinds memKinds) *memChoice {
	m := &s.choice
	*m = memChoice{s: s, req: memReq{id: spec.GetId(), size: memSize(spec), kinds: kinds, prio: memPrio(qosOf(pod, spec))}, uniform: true}
	if s.mem.off {
		clear(s.offers)
		return m
	}
	nodes := s.mem.byKinds(kinds)
	for i, aff := range s.maskOf {
		o := s.mem.offer(m.req, aff&nodes)
		s.offers[i] = o
		if o.err != nil || o.kinds != kinds {
			m.uniform = false
		}
	}
	return m
}

// of is the offer of pool p: its memory nodes of the kinds asked for, as
// libmem would allocate them (nri-plugins' getMemOffer).
func (m *memChoice) of(p *pool) *memOffer { return &m.s.offers[p.maskID] }

// withOffer is nri-plugins' "better matching memory offer" (compareScores):
// a pool whose offer fails loses; then one whose offer is of exactly the
// kinds asked for wins.
func (m *memChoice) withOffer(next order) order {
	if m.uniform {
		return next
	}
	offers := m.s.offers
	return func(a, b *pool, free []int64) int {
		oa, ob := &offers[a.maskID], &offers[b.maskID]
		if (oa.err == nil) != (ob.err == nil) {
			return first(oa.err == nil)
		}
		if oa.err == nil {
			if ta, tb := oa.kinds == m.req.kinds, ob.kinds == m.req.kinds; ta != tb {
				return first(ta)
			}
		}
		return next(a, b, free)
	}
}

// withTighter is nri-plugins' "tighter memory offer" (compareScores): the
// offer over fewer memory nodes wins. An offer widened to resolve an
// overcommit loses here to one that fits where it is.
func (m *memChoice) withTighter(next order) order {
	offers := m.s.offers
	return func(a, b *pool, free []int64) int {
		if a.maskID != b.maskID {
			oa, ob := &offers[a.maskID], &offers[b.maskID]
			if oa.err == nil && ob.err == nil && oa.n != ob.n {
				return first(oa.n < ob.n)
			}
		}
		return next(a, b, free)
	}
}

// takeOffer gives c the memory pool p offers it: its zone and its memory
// nodes (when pinned). It refuses the container when no memory can be had
// there.
func (m *memChoice) takeOffer(c *container, p *pool, pinMems bool) error {
	o := m.of(p)
	if o.err != nil {
		return abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldMemRequest,
			"%d bytes of %s memory do not fit in pool %s: %v", m.req.size, m.req.kinds, p.name, o.err)
	}
	c.memZone, c.memKinds = o.zone, m.req.kinds
	if pinMems {
		switch {
		case o.zone == 0:
			c.mems = m.s.memsFor(p, m.req.kinds)
		case o.zone == p.defMask:
			c.mems = p.memsText
		default:
			c.mems = o.zone.String()
		}
	}
	return nil
}

// takeMoves makes the moves of the other containers pool p's offer needs.
func (m *memChoice) takeMoves(p *pool) {
	s := m.s
	if o := m.of(p); len(o.moves) > 0 {
		ids := make([]string, 0, len(o.moves))
		for id := range o.moves {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			q := s.ctrs[id]
			r := s.mem.reqs[id]
			if q == nil || r == nil {
				continue
			}
			s.mem.move(o.moves[id], r)
			q.memZone = r.zone
			if q.mems != "" {
				q.mems = r.zone.String()
				s.memMoved = append(s.memMoved, q)
			}
		}
	}
}

// withMemMoves adds to out the memory nodes of the containers an allocation
// widened since the last answer (but skip's), one update per container,
// sorted by id.
func (s *state) withMemMoves(out []*abi.ContainerUpdate, skip string) []*abi.ContainerUpdate {
	if len(s.memMoved) == 0 {
		return out
	}
	out, _ = abi.ExpandUpdates(out)
	for _, q := range s.memMoved {
		if q.id == skip || s.ctrs[q.id] != q {
			continue
		}
		i := slices.IndexFunc(out, func(u *abi.ContainerUpdate) bool { return u.ContainerId == q.id })
		if i < 0 {
			out = append(out, &abi.ContainerUpdate{ContainerId: q.id})
			i = len(out) - 1
		}
		out[i].CpusetMems = q.mems
	}
	clear(s.memMoved)
	s.memMoved = s.memMoved[:0]
	slices.SortFunc(out, func(a, b *abi.ContainerUpdate) int { return strings.Compare(a.ContainerId, b.ContainerId) })
	return out
}
