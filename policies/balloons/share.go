package balloons

import (
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
)

// reshare recomputes the idle CPUs each balloon shares: the free CPUs,
// isolated ones excepted, in the shareIdleCPUsInSame groups of its CPUs (its
// zone). Only balloons whose CPUs changed or whose zone has a group where a
// CPU joined or left the free ones since the last reshare (delta) are
// recomputed: from the whole zone when the zone moved, else from delta alone.
// A balloon's shared CPUs are then all the idle CPUs of its zone, so a
// later balloon of a zone reshared before takes that set as it is: the
// balloons of a zone hold one set (RATIONALE.md, "Why do balloons of one
// zone share one set of idle CPUs?").
func (s *state) reshare() {
	if s.freeDelta.IsEmpty() {
		return
	}
	delta := s.freeDelta.AppendTo(s.delta[:0])
	defer func() { s.delta = delta[:0] }()
	for _, t := range s.types {
		lvl := t.ShareIdleCPUsInSame
		if lvl == "" || len(t.own) == 0 {
			continue
		}
		touched := s.groupsOf(lvl, delta)
		done := s.zones[:0] // the zones reshared so far and their idle CPUs
		for _, b := range t.own {
			moved := !b.zoneOf.Equal(b.cpus)
			if moved {
				b.zoneOf = b.cpus
				if lvl == LevelSystem {
					b.zone, b.zoneKeys = s.available, []int32{0}
				} else {
					b.zone, b.zoneKeys = s.ix.within(lvl, b.cpus)
				}
			} else if !intersectsSorted(b.zoneKeys, touched) {
				continue
			}
			i := 0
			for i < len(done) && !done[i].zone.Equal(b.zone) {
				i++
			}
			switch {
			case i < len(done):
				if !b.shared.Equal(done[i].idle) {
					s.setShared(b, done[i].idle)
				}
				continue
			case moved:
				if !s.sharesIdle(b) {
					s.setShared(b, s.idleIn(b.zone))
				}
			default:
				s.reshareDelta(b, delta)
			}
			done = append(done, zoneIdle{zone: b.zone, idle: b.shared})
		}
		clear(done)
		s.zones = done[:0]
	}
	s.freeDelta = cpuset.Set{}
}

// zoneIdle is a zone reshare has reshared and its idle CPUs.
type zoneIdle struct{ zone, idle cpuset.Set }

// reshareDelta updates what b shares from the CPUs of delta, those that
// joined or left the free ones, when b's zone stayed the same. The CPUs to
// add and drop are gathered in the state's scratch lists (sorted, as delta
// is) and applied in one cpuset.Set.Edit: one allocation for a balloon
// whose share changes, none for one whose share does not.
func (s *state) reshareDelta(b *balloon, delta []uint32) {
	add, rm := s.shareAdd[:0], s.shareRm[:0]
	for _, id := range delta {
		if !b.zone.Contains(id) {
			continue
		}
		switch idle, has := s.free[id] && !s.ix.isIsolated[id], b.shared.Contains(id); {
		case idle && !has:
			add = append(add, id)
		case !idle && has:
			rm = append(rm, id)
		}
	}
	if len(add) > 0 || len(rm) > 0 {
		s.setShared(b, b.shared.Edit(add, rm))
	}
	s.shareAdd, s.shareRm = add[:0], rm[:0]
}

// sharesIdle tells whether b shares exactly the idle CPUs of its zone
// (without allocating: most reshares change nothing).
func (s *state) sharesIdle(b *balloon) bool {
	n := 0
	for id := range b.zone.All() {
		if s.free[id] && !s.ix.isIsolated[id] {
			if !b.shared.Contains(id) {
				return false
			}
			n++
		}
	}
	return n == b.shared.Size()
}

// idleIn are the free CPUs of zone, isolated ones excepted.
func (s *state) idleIn(zone cpuset.Set) cpuset.Set {
	ids := make([]uint32, 0, zone.Size())
	for id := range zone.All() {
		if s.free[id] && !s.ix.isIsolated[id] {
			ids = append(ids, id)
		}
	}
	return cpuset.New(ids...)
}

// groupsOf are the group keys at lvl of the CPUs ids, sorted, in the
// state's scratch list: valid until the next call.
func (s *state) groupsOf(lvl Level, ids []uint32) []int32 {
	keys := s.keys[:0]
	if lvl == LevelSystem {
		keys = append(keys, 0)
	} else {
		for _, id := range ids {
			keys = append(keys, s.ix.groupKey(lvl, id))
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
	}
	s.keys = keys[:0]
	return keys
}

// intersectsSorted tells whether two sorted lists share an element.
func intersectsSorted(a, b []int32) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			return true
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return false
}
