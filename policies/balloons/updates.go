package balloons

import (
	"slices"

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
		set = s.ix.singleThreads(set)
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

// pinContainer returns what c gets now.
func (s *state) pinContainer(c *container) (cpus, mems string) {
	p := s.pinning(c.b, c.hideHT, c.memTypes)
	if c.keepMems {
		return p.cpus, ""
	}
	return p.cpus, p.mems
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
	for _, b := range s.dirty {
		for _, c := range b.members {
			cpus, mems := s.pinContainer(c)
			if cpus != c.cpus && cpus != "" || mems != c.mems && mems != "" {
				changed = append(changed, c)
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
		for i, c := range changed {
			cpus, mems := s.pinContainer(c)
			u := &slab[i]
			u.ContainerId = c.id
			if cpus != c.cpus && cpus != "" {
				u.CpusetCpus, c.cpus = cpus, cpus
			}
			if mems != c.mems && mems != "" {
				u.CpusetMems, c.mems = mems, mems
			}
			if c.id != skip {
				out = append(out, u)
			}
		}
	}
	clear(s.changed)
	s.changed = s.changed[:0]
	return out
}
