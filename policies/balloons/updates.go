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

// group is one update being built: its first container, the lists it
// sends ("" for one that does not change) and its also_container_ids: a
// balloon's own list (held), or a range of the ids scratch list.
type group struct {
	first      string
	cpus, mems string
	held       []string
	from, to   int
}

// extend appends more to g's ids, in the scratch list ids, which it
// returns; a group that held a balloon's list copies it there first.
func (g *group) extend(ids []string, more ...string) []string {
	if g.held != nil {
		g.from = len(ids)
		ids = append(ids, g.held...)
		g.held = nil
	}
	ids = append(ids, more...)
	g.to = len(ids)
	return ids
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
//
// It is one pass over the containers, each recorded as it is told, with
// the groups and their ids in scratch lists the state keeps: the default
// balloon's ~200 containers cost a pointer comparison or two each, and the
// answer at most three allocations (RATIONALE.md, "Why one pass for the
// updates?"); a group of a whole balloon holds the balloon's own list of
// ids ("Why may an answer hold a balloon's ids?").
func (s *state) updates(skip string) []*abi.ContainerUpdate {
	s.reshare()
	s.dirty.Sort(byTypeAndInstance)
	groups, ids := s.groups[:0], s.ids[:0]
	var cpusCmp, memsCmp listCompare
	for _, b := range s.dirty.Items() {
		if s.updateSynced(b, skip, &groups, &ids, &cpusCmp, &memsCmp) {
			continue
		}
		for _, c := range b.members {
			b.unsync(c)
		}
		for _, c := range b.members {
			p := b.pin[pinSlot(c.hideHT, c.memTypes)]
			if p == nil {
				p = s.pinOf(c)
			}
			var cpus, mems string
			if !sameString(c.cpus, p.cpus) && cpusCmp.changed(c.cpus, p.cpus) {
				c.cpus, cpus = p.cpus, p.cpus
			}
			if !c.keepMems && !sameString(c.mems, p.mems) && memsCmp.changed(c.mems, p.mems) {
				c.mems, mems = p.mems, p.mems
			}
			if cpus == "" && mems == "" || c.id == skip {
				continue
			}
			if n := len(groups); n > 0 && sameList(groups[n-1].cpus, cpus) && sameList(groups[n-1].mems, mems) {
				if g := &groups[n-1]; g.held == nil {
					ids = append(ids, c.id) // inline: a call per container costs more
					g.to = len(ids)
				} else {
					ids = g.extend(ids, c.id)
				}
				continue
			}
			groups = append(groups, group{first: c.id, cpus: cpus, mems: mems, from: len(ids), to: len(ids)})
		}
		b.sync()
	}
	s.dirty.Clear()
	var out []*abi.ContainerUpdate
	if len(groups) > 0 {
		// One allocation for the messages, one for all groups' ids but
		// those that hold a balloon's list.
		slab := make([]abi.ContainerUpdate, len(groups))
		var also []string
		if len(ids) > 0 {
			also = slices.Clone(ids)
		}
		out = make([]*abi.ContainerUpdate, len(groups))
		for i, g := range groups {
			u := &slab[i]
			u.ContainerId, u.CpusetCpus, u.CpusetMems = g.first, g.cpus, g.mems
			switch {
			case len(g.held) > 0:
				u.AlsoContainerIds = g.held[:len(g.held):len(g.held)]
			case g.to > g.from:
				u.AlsoContainerIds = also[g.from:g.to:g.to]
			}
			out[i] = u
		}
	}
	clear(groups)
	clear(ids)
	s.groups, s.ids = groups[:0], ids[:0]
	return out
}

// syncable tells whether c may share its balloon's held lists: it takes
// the type's pinning as it is (no hidden hyperthreads, no memory-type
// annotation, its memory nodes not preserved).
func (c *container) syncable() bool { return !c.hideHT && c.memTypes == 0 && !c.keepMems }

// sync lets b's containers share the lists they were given when all of them
// can and hold the same strings.
func (b *balloon) sync() {
	if len(b.members) == 0 {
		return
	}
	first := b.members[0]
	for _, c := range b.members {
		if !c.syncable() || !sameString(c.cpus, first.cpus) || !sameString(c.mems, first.mems) {
			return
		}
	}
	b.held = pinned{cpus: first.cpus, mems: first.mems}
	for _, c := range b.members {
		c.synced = true
	}
	b.nSynced = len(b.members)
}

// updateSynced is updates' loop for a balloon whose containers all share
// its held lists (one of them may be skip, which holds its own): the change
// is decided once, the held lists changed once, and the ids of all but
// skip appended at once, in the order and groups the loop over each
// container gives. It tells whether it applied.
func (s *state) updateSynced(b *balloon, skip string, groups *[]group, ids *[]string, cpusCmp, memsCmp *listCompare) bool {
	lone := -1 // skip's index among b's containers, when it is not synced
	switch {
	case len(b.members) == 0:
		return true // nothing to tell, nothing to format
	case b.nSynced != len(b.members):
		i, found := slices.BinarySearch(b.ids, skip)
		if !found || b.members[i].synced || b.nSynced != len(b.members)-1 || !b.members[i].syncable() {
			return false
		}
		lone = i
	}
	p := b.pin[0]
	if p == nil {
		p = s.pinning(b, false, 0)
	}
	var cpus, mems string
	if !sameString(b.held.cpus, p.cpus) && cpusCmp.changed(b.held.cpus, p.cpus) {
		b.held.cpus, cpus = p.cpus, p.cpus
	}
	if !sameString(b.held.mems, p.mems) && memsCmp.changed(b.held.mems, p.mems) {
		b.held.mems, mems = p.mems, p.mems
	}
	if lone >= 0 {
		// skip answers no update; it is told its lists as the loop would.
		c := b.members[lone]
		if !sameString(c.cpus, p.cpus) && cpusCmp.changed(c.cpus, p.cpus) {
			c.cpus = p.cpus
		}
		if !sameString(c.mems, p.mems) && memsCmp.changed(c.mems, p.mems) {
			c.mems = p.mems
		}
		if sameString(c.cpus, b.held.cpus) && sameString(c.mems, b.held.mems) {
			c.synced = true
			b.nSynced++
		}
	}
	if cpus == "" && mems == "" {
		return true
	}
	// The ids to tell: all of b's, or all but skip's. Either is a list b
	// keeps (its ids, or those before skip was added) unless b's ids
	// changed otherwise since: then the two parts around skip.
	all, before, after := b.ids, b.ids, []string(nil)
	if lone >= 0 {
		all, before, after = b.idsWithout(skip, lone), b.ids[:lone], b.ids[lone+1:]
	}
	if len(before) == 0 {
		before, after = after, nil
	}
	if len(before) == 0 {
		return true
	}
	g, out := *groups, *ids
	switch n := len(g); {
	case n > 0 && sameList(g[n-1].cpus, cpus) && sameList(g[n-1].mems, mems):
		out = g[n-1].extend(out, before...)
		out = g[n-1].extend(out, after...)
	case all != nil:
		// An answer may hold the list: b never changes it.
		g = append(g, group{first: all[0], cpus: cpus, mems: mems, held: all[1:]})
	default:
		g = append(g, group{first: before[0], cpus: cpus, mems: mems, from: len(out)})
		out = g[len(g)-1].extend(out, before[1:]...)
		out = g[len(g)-1].extend(out, after...)
	}
	*groups, *ids = g, out
	return true
}

// sameList is a == b, answered without reading the bytes when both are one
// string in memory.
func sameList(a, b string) bool { return sameString(a, b) || a == b }
