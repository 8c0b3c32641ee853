package balloons

import (
	"slices"
	"unsafe"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// pinning is what b's containers should have now: its CPUs and shared idle
// CPUs (one thread per core for those that hide hyperthreads), and their
// memory nodes, of the type's memoryTypes or, for containers annotated
// with memory types m, of those; "" for what the configuration leaves
// alone. It is computed once per change of b's CPUs and pinSlot.
func (s *state) pinning(b *balloon, hideHT bool, m memTypes) *pinned {
	i := pinSlot(hideHT, m)
	if p := b.pin[i]; p != nil {
		return p
	}
	set := b.pinnable()
	if hideHT {
		set = s.ix.SingleThreads(set)
	}
	p := &pinned{}
	switch {
	case m != 0:
		p.cpus = s.pinning(b, hideHT, 0).cpus // the same CPUs as without the annotation
	case s.pinCPU:
		p.cpus = set.String()
	}
	if b.t.pinMemory {
		types := b.t.MemoryTypes
		if m != 0 {
			types = m.list()
		}
		p.mems = s.ix.memsList(set, types)
	}
	b.pin[i] = p
	return p
}

// pinOf is the pinning c's balloon gives it now.
func (s *state) pinOf(c *container) *pinned { return s.pinning(c.b, c.hideHT, c.memTypes) }

// assign records that c holds p's CPUs and memory nodes (memory.preserve:
// not the nodes).
func (c *container) assign(p *pinned) {
	c.cpus, c.mems = p.cpus, p.mems
	if c.keepMems {
		c.mems = ""
	}
}

// listCompare compares a container's list with its balloon's, remembering
// the last comparison: a balloon's containers mostly hold one same string
// and move to one same new one, so lists hundreds of bytes long are
// compared once per balloon rather than byte by byte for each container.
type listCompare struct {
	held, next string
	differ     bool
}

// changed tells whether next is a change from held: non-empty and another
// list.
func (l *listCompare) changed(held, next string) bool {
	switch {
	case next == "" || sameString(held, next):
		return false
	case sameString(held, l.held) && sameString(next, l.next):
		return l.differ
	}
	l.held, l.next, l.differ = held, next, held != next
	return l.differ
}

// sameString tells whether a and b are one string in memory.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// change is one container's update: the pinning it moves to and which of
// its lists change.
type change struct {
	c          *container
	p          *pinned
	cpus, mems bool
}

// updates reshares the idle CPUs, then answers an update for every container
// of a dirty balloon whose CPUs or memory nodes changed, except skip (just
// created: its adjustment says it). They come by balloon (type, then
// instance) and, within one, by container id: deterministic, with no sort
// of the whole answer.
func (s *state) updates(skip string) []*abi.ContainerUpdate {
	s.reshare()
	slices.SortFunc(s.dirty, byTypeAndInstance)
	changed := s.changed[:0]
	var cpusCmp, memsCmp listCompare
	for _, b := range s.dirty {
		for _, c := range b.members {
			p := s.pinOf(c)
			ch := change{c: c, p: p, cpus: cpusCmp.changed(c.cpus, p.cpus), mems: !c.keepMems && memsCmp.changed(c.mems, p.mems)}
			if ch.cpus || ch.mems {
				changed = append(changed, ch)
			}
		}
	}
	s.clearDirty()
	s.changed = changed
	var out []*abi.ContainerUpdate
	if n := len(changed); n > 0 {
		// One allocation for all of them: each is a pointer into the slab.
		slab := make([]abi.ContainerUpdate, n)
		out = make([]*abi.ContainerUpdate, 0, n)
		for i, ch := range changed {
			u := &slab[i]
			u.ContainerId = ch.c.id
			if ch.cpus {
				u.CpusetCpus, ch.c.cpus = ch.p.cpus, ch.p.cpus
			}
			if ch.mems {
				u.CpusetMems, ch.c.mems = ch.p.mems, ch.p.mems
			}
			if ch.c.id != skip {
				out = append(out, u)
			}
		}
	}
	clear(s.changed)
	s.changed = s.changed[:0]
	return out
}
