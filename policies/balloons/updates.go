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
	s.changed = changed
	var out []*abi.ContainerUpdate
	if n := len(changed); n > 0 {
		// Each balloon's containers are sorted already: merge the runs.
		changed = mergeRuns(changed)
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

// mergeRuns sorts cs, a concatenation of runs sorted by id, by merging
// neighbouring runs pairwise. It returns cs when it is one run, else a new
// slice.
func mergeRuns(cs []*container) []*container {
	var starts []int
	for i := range cs {
		if i == 0 || cs[i].id < cs[i-1].id {
			starts = append(starts, i)
		}
	}
	if len(starts) <= 1 {
		return cs
	}
	cs = slices.Clone(cs)
	buf := make([]*container, len(cs))
	for len(starts) > 1 {
		var next []int
		for k := 0; k < len(starts); k += 2 {
			lo := starts[k]
			next = append(next, lo)
			if k+1 == len(starts) {
				copy(buf[lo:], cs[lo:])
				break
			}
			mid, hi := starts[k+1], len(cs)
			if k+2 < len(starts) {
				hi = starts[k+2]
			}
			mergeInto(buf[lo:hi], cs[lo:mid], cs[mid:hi])
		}
		cs, buf, starts = buf, cs, next
	}
	return cs
}

// mergeInto merges the sorted a and b into dst (len(a)+len(b) long).
func mergeInto(dst, a, b []*container) {
	i, j := 0, 0
	for k := range dst {
		if j == len(b) || i < len(a) && a[i].id <= b[j].id {
			dst[k], i = a[i], i+1
		} else {
			dst[k], j = b[j], j+1
		}
	}
}
