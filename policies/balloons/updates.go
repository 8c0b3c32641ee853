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
// of the whole answer. Consecutive containers given the same change travel
// as one grouped update (ContainerUpdate.also_container_ids, ABI v1.1),
// built here rather than folded afterwards: a balloon of 200 containers
// costs one message and one slice of ids instead of 200 messages. The SDK
// expands them for a host older than v1.1.
func (s *state) updates(skip string) []*abi.ContainerUpdate {
	s.reshare()
	s.dirty.Sort(byTypeAndInstance)
	changed := s.changed[:0]
	var cpusCmp, memsCmp listCompare
	for _, b := range s.dirty.Items() {
		for _, c := range b.members {
			p := s.pinOf(c)
			ch := change{c: c, p: p, cpus: cpusCmp.changed(c.cpus, p.cpus), mems: !c.keepMems && memsCmp.changed(c.mems, p.mems)}
			if ch.cpus || ch.mems {
				changed = append(changed, ch)
			}
		}
	}
	s.dirty.Clear()
	// Record the new lists, drop skip, and count the runs of one change.
	all := changed
	groups, n := 0, 0
	for _, ch := range all {
		if ch.cpus {
			ch.c.cpus = ch.p.cpus
		}
		if ch.mems {
			ch.c.mems = ch.p.mems
		}
		if ch.c.id == skip {
			continue
		}
		if n == 0 || !changed[n-1].sameAs(ch) {
			groups++
		}
		changed[n] = ch
		n++
	}
	changed = changed[:n]
	var out []*abi.ContainerUpdate
	if groups > 0 {
		// One allocation for the messages, one for all groups' ids.
		slab := make([]abi.ContainerUpdate, groups)
		ids := make([]string, n-groups)
		out = make([]*abi.ContainerUpdate, groups)
		k := -1
		for i, ch := range changed {
			if i > 0 && changed[i-1].sameAs(ch) {
				u := out[k]
				u.AlsoContainerIds = append(u.AlsoContainerIds, ch.c.id)
				continue
			}
			if k >= 0 {
				ids = ids[len(out[k].AlsoContainerIds):]
			}
			k++
			u := &slab[k]
			out[k] = u
			u.ContainerId, u.AlsoContainerIds = ch.c.id, ids[:0:len(ids)]
			u.CpusetCpus, u.CpusetMems = ch.lists()
		}
		for _, u := range out {
			u.AlsoContainerIds = slices.Clip(u.AlsoContainerIds)
			if len(u.AlsoContainerIds) == 0 {
				u.AlsoContainerIds = nil
			}
		}
	}
	clear(all)
	s.changed = all[:0]
	return out
}

// lists are the cpuset_cpus and cpuset_mems ch sends ("" for a list that
// does not change).
func (ch change) lists() (cpus, mems string) {
	if ch.cpus {
		cpus = ch.p.cpus
	}
	if ch.mems {
		mems = ch.p.mems
	}
	return cpus, mems
}

// sameAs tells whether ch makes the same change as d: the same lists,
// compared as abi.FoldUpdates does (one pointer comparison when both come
// from one pinning, the bytes otherwise).
func (d change) sameAs(ch change) bool {
	dc, dm := d.lists()
	cc, cm := ch.lists()
	return sameList(dc, cc) && sameList(dm, cm)
}

// sameList is a == b, answered without reading the bytes when both are one
// string in memory.
func sameList(a, b string) bool { return sameString(a, b) || a == b }
