package balloons

import (
	"cmp"
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// pinning is what b's containers should have now: its CPUs and shared idle
// CPUs (one thread per core for those that hide hyperthreads), and their
// memory nodes; "" for what the configuration leaves alone. It is computed
// once per change of b's CPUs.
func (s *state) pinning(b *balloon, hideHT bool) *pinned {
	h := 0
	if hideHT {
		h = 1
	}
	if p := b.pin[h]; p != nil {
		return p
	}
	set := b.pinnable()
	if hideHT {
		set = s.ix.singleThreads(set)
	}
	p := &pinned{}
	if s.pinCPU {
		p.cpus = set.String()
	}
	if b.t.pinMemory {
		p.mems = s.ix.memsOf(set, b.t.MemoryTypes).String()
	}
	b.pin[h] = p
	return p
}

// pinContainer returns what c gets now.
func (s *state) pinContainer(c *container) (cpus, mems string) {
	p := s.pinning(c.b, c.hideHT)
	if c.keepMems {
		return p.cpus, ""
	}
	return p.cpus, p.mems
}

// updates reshares the idle CPUs, then answers an update for every container
// of a dirty balloon whose CPUs or memory nodes changed, except skip (just
// created: its adjustment says it), sorted by container id.
func (s *state) updates(skip string) []*abi.ContainerUpdate {
	s.reshare()
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
	clear(changed)
	s.changed = changed[:0]
	if !slices.IsSortedFunc(out, byContainerID) {
		slices.SortFunc(out, byContainerID)
	}
	return out
}

func byContainerID(a, b *abi.ContainerUpdate) int { return cmp.Compare(a.ContainerId, b.ContainerId) }
