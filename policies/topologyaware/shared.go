package topologyaware

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// The shared CPUs of a pool change only when an exclusive grant (a
// container's or a claim's) takes or gives back CPUs of that pool, and they
// change what the pool's members should have. Both are tracked so that a
// decision costs what it touches: the pools on the chains of the CPUs it
// moved, and the members of those pools, not every live container.

// take marks cpus as granted exclusively, out of the shared CPUs.
func (s *state) take(cpus cpuset.Set) {
	s.exclusive = s.exclusive.Union(cpus)
	s.refresh(cpus, true)
}

// give returns exclusively granted cpus to the shared CPUs.
func (s *state) give(cpus cpuset.Set) {
	s.exclusive = s.exclusive.Difference(cpus)
	s.refresh(cpus, false)
}

// refresh accounts for cpus having been taken (or given back, when
// taken is false) in every pool holding one of them: their leaf pools and
// those pools' ancestors. A pool's size changes at once; its set is only
// recomputed when someone asks for it (sharedSet), so that the root of a
// 4,096-CPU machine is not rebuilt for every grant.
func (s *state) refresh(cpus cpuset.Set, taken bool) {
	s.epoch++
	ids := cpus.Sorted()
	for _, id := range ids {
		if int(id) >= len(s.leaf) {
			continue
		}
		for p := s.leaf[id]; p != nil && p.seen != s.epoch; p = p.parent {
			p.seen = s.epoch
			n := 0
			for _, c := range ids {
				if p.sharable.Contains(c) {
					n++
				}
			}
			if n == 0 {
				continue
			}
			if !taken {
				n = -n
			}
			p.nShared -= n
			p.setStale, p.stale = true, true
			s.markChanged(p)
		}
	}
}

// sharedSet is p's shared CPUs.
func (p *pool) sharedSet() cpuset.Set {
	if p.setStale {
		p.shared, p.setStale = p.sharable.Difference(*p.excl), false
	}
	return p.shared
}

// markChanged queues p for the next updates.
func (s *state) markChanged(p *pool) { s.changed.Add(p) }

// text is p's shared CPUs in list form, formatted when first needed.
func (p *pool) text() string {
	if p.stale {
		p.sharedText, p.stale = p.sharedSet().String(), false
	}
	return p.sharedText
}

// followsPool tells whether c's cpuset contains its pool's shared CPUs, so
// that it is a member of the pool whose changes reach it.
func (c *container) followsPool() bool {
	return c.pinCPU && (c.kind == kindShared || c.kind == kindMixed || c.kind == kindClaim && c.milli > 0)
}

// cpusOf is the cpuset_cpus c should have now ("" when not pinned).
func (s *state) cpusOf(c *container) string {
	t := s.grantedCPUs(c)
	if !c.hideHT || t == "" {
		return t
	}
	set, _ := cpuset.Parse(t)
	return s.ix.SingleThreads(set).String()
}

// grantedCPUs is the cpuset_cpus of c's grant, hyperthreads included.
func (s *state) grantedCPUs(c *container) string {
	if !c.pinCPU {
		return ""
	}
	switch c.kind {
	case kindShared:
		return c.pool.text()
	case kindReserved:
		return s.reservedText
	case kindClaim:
		if c.milli > 0 {
			return c.cpus.Union(c.pool.sharedSet()).String()
		}
		return c.cpusText
	case kindExclusive, kindFixed:
		return c.cpusText
	case kindMixed:
		return c.cpus.Union(c.pool.sharedSet()).String()
	}
	return ""
}

// updates answers the ContainerUpdates for every pinned container whose CPUs
// changed since it was last told, except skip, in container id order. Only
// a change of a pool's shared CPUs changes what a container should have (add
// records the rest), so only the members of the changed pools are looked at.
// Members are kept by id, so the answer needs sorting only when more than
// one pool contributes. Consecutive containers moving to the same CPUs, a
// pool's shared members, share one grouped update (ABI v1.1
// also_container_ids; the SDK expands it for an older host): one exclusive
// grant moves every shared container of its socket, and one update per
// container was most of the decision's allocations.
func (s *state) updates(skip string) []*abi.ContainerUpdate {
	moved, pools := s.moved[:0], 0
	for _, p := range s.changed.Items() {
		n := len(moved)
		for _, c := range p.members {
			if c.id == skip {
				continue
			}
			if want := s.cpusOf(c); want != c.sent {
				c.sent = want
				moved = append(moved, c)
			}
		}
		if len(moved) > n {
			pools++
		}
	}
	s.changed.Clear()
	if len(moved) == 0 {
		return s.withMemMoves(nil, skip)
	}
	if pools > 1 {
		slices.SortFunc(moved, func(a, b *container) int { return strings.Compare(a.id, b.id) })
	}
	var out []*abi.ContainerUpdate
	for i := 0; i < len(moved); {
		j := i + 1
		for j < len(moved) && sameText(moved[j].sent, moved[i].sent) {
			j++
		}
		u := &abi.ContainerUpdate{ContainerId: moved[i].id, CpusetCpus: moved[i].sent}
		if j-i > 1 {
			u.AlsoContainerIds = make([]string, j-i-1)
			for k, c := range moved[i+1 : j] {
				u.AlsoContainerIds[k] = c.id
			}
		}
		out = append(out, u)
		i = j
	}
	clear(moved)
	s.moved = moved[:0]
	return s.withMemMoves(out, skip)
}

// plainUpdates is updates with every group expanded, for the answers that
// merge other updates into them.
func (s *state) plainUpdates(skip string) []*abi.ContainerUpdate {
	us, _ := abi.ExpandUpdates(s.updates(skip)) // updates never builds an empty id
	return us
}

// sameText is a == b, without reading the bytes when both are one string in
// memory (a pool's members share its text).
func sameText(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}
