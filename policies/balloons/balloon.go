package balloons

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/sdk/go/kit/dirty"
)

// balloon is one instance of a type: CPUs of its own, the idle CPUs it
// shares, and its containers. A composite balloon's CPUs are its parts'.
type balloon struct {
	t      *btype
	inst   int
	label  string // "TYPE[INSTANCE]"
	cpus   cpuset.Set
	shared cpuset.Set
	// members are its containers, sorted by id; ids their ids, a list
	// never changed in place (each change makes another), so an answer may
	// hold it; prevIDs is the list before the last change, which added or
	// dropped lastID at lastAt (RATIONALE.md, "Why may an answer hold a
	// balloon's ids?").
	members          []*container
	ids, prevIDs     []string
	lastID           string
	lastAt           int
	lastAdded, known bool
	// held are the lists its synced members were last given, nSynced how
	// many they are (RATIONALE.md, "Why do a balloon's containers share
	// what they were given?").
	held    pinned
	nSynced int
	milli   int64 // the containers' requests
	nss     map[string]int
	groups  map[string]int
	parts   []*balloon
	claim   string // the DRA claim bound to it
	// zone is what shareIdleCPUsInSame covers around zoneOf, its CPUs when
	// the zone was last computed; zoneKeys are the zone's groups at that
	// level.
	zone, zoneOf cpuset.Set
	zoneKeys     []int32
	// Mark is set while the balloon is listed in state.dirty: its
	// containers may hold other CPUs or memory nodes than it gives now.
	dirty.Mark
	// pin memoizes pinning by pinSlot: without and with hidden
	// hyperthreads, for the type's memoryTypes and for each set of
	// annotated memory types; nil after cpus or shared changed.
	pin [pinSlots]*pinned
	// prev are the pinnings b had for prevCPUs and prevShared, its CPUs
	// and shared idle CPUs before their last change: taken back, not
	// formatted again, when b returns to them (a container created and
	// removed, a request raised and lowered back).
	prev                 [pinSlots]*pinned
	prevCPUs, prevShared cpuset.Set
}

// pinSlots is the size of balloon.pin: hideHT by memory type set.
const pinSlots = 2 * memTypeSets

// pinSlot is balloon.pin's index for containers that hide hyperthreads or
// not and ask for memory types m (0: the type's memoryTypes). Without an
// annotation it is 0 or 1.
func pinSlot(hideHT bool, m memTypes) int {
	i := int(m) << 1
	if hideHT {
		i |= 1
	}
	return i
}

// pinned is what a balloon's containers get: cpuset_cpus and cpuset_mems.
type pinned struct{ cpus, mems string }

func (b *balloon) name() string { return b.label }

// pinnable are the CPUs its containers may use.
func (b *balloon) pinnable() cpuset.Set { return b.cpus.Union(b.shared) }

func compareIDs(c *container, id string) int { return cmp.Compare(c.id, id) }

// addMember lists c among b's containers.
func (b *balloon) addMember(c *container) {
	i, _ := slices.BinarySearchFunc(b.members, c.id, compareIDs)
	b.members = slices.Insert(b.members, i, c)
	if b.undoes(c.id, i, true) {
		return
	}
	ids := make([]string, len(b.ids)+1)
	copy(ids, b.ids[:i])
	ids[i] = c.id
	copy(ids[i+1:], b.ids[i:])
	b.setIDs(ids, c.id, i, true)
}

// dropMember takes container id off b's list; it keeps what it was given.
func (b *balloon) dropMember(id string) {
	i, found := slices.BinarySearchFunc(b.members, id, compareIDs)
	if !found {
		return
	}
	b.unsync(b.members[i])
	b.members = slices.Delete(b.members, i, i+1)
	if b.undoes(id, i, false) {
		return
	}
	ids := make([]string, len(b.ids)-1)
	copy(ids, b.ids[:i])
	copy(ids[i:], b.ids[i+1:])
	b.setIDs(ids, id, i, false)
}

// undoes takes back the ids before the last change when adding (added) or
// dropping id at i undoes it: a container created and removed again, or
// removed and created again. It tells whether it did.
func (b *balloon) undoes(id string, i int, added bool) bool {
	if !b.known || b.lastAdded == added || b.lastAt != i || b.lastID != id {
		return false
	}
	b.ids, b.prevIDs = b.prevIDs, b.ids
	b.lastAdded = added
	return true
}

// setIDs makes ids b's list, after adding (added) or dropping id at i.
func (b *balloon) setIDs(ids []string, id string, i int, added bool) {
	b.ids, b.prevIDs = ids, b.ids
	b.lastID, b.lastAt, b.lastAdded, b.known = id, i, added, true
}

// idsWithout is b's list without container skip at i, when that is a list
// b kept: the one before skip was added (nil otherwise).
func (b *balloon) idsWithout(skip string, i int) []string {
	if b.known && b.lastAdded && b.lastAt == i && b.lastID == skip {
		return b.prevIDs
	}
	return nil
}

// unsync gives c its own copy of the lists it shares with b.
func (b *balloon) unsync(c *container) {
	if c.synced {
		c.cpus, c.mems = b.held.cpus, b.held.mems
		c.synced = false
		b.nSynced--
	}
}

// memberIDs are b's containers' ids, sorted.
func (b *balloon) memberIDs() []string {
	ids := make([]string, len(b.ids))
	copy(ids, b.ids)
	return ids
}

func (s *state) makeBalloon(t *btype, inst int) *balloon {
	return &balloon{t: t, inst: inst, label: fmt.Sprintf("%s[%d]", t.Name, inst), nss: map[string]int{}, groups: map[string]int{}}
}

// setCPUs gives b its own CPUs; its containers are told with the next
// updates.
func (s *state) setCPUs(b *balloon, cpus cpuset.Set) {
	b.move(cpus, b.shared)
	s.markDirty(b)
}

// setShared gives b the idle CPUs it shares.
func (s *state) setShared(b *balloon, shared cpuset.Set) {
	b.move(b.cpus, shared)
	s.markDirty(b)
}

// move gives b cpus and shared. The pinnings of what it leaves are kept
// as prev, and if it returns to what it had before its last change, the
// pinnings of then are taken back (RATIONALE.md, "Why keep the previous
// pinning?").
func (b *balloon) move(cpus, shared cpuset.Set) {
	switch {
	case cpus.Equal(b.cpus) && shared.Equal(b.shared):
	case cpus.Equal(b.prevCPUs) && shared.Equal(b.prevShared):
		b.pin, b.prev = b.prev, b.pin
		b.prevCPUs, b.prevShared = b.cpus, b.shared
	default:
		b.prev, b.pin = b.pin, [pinSlots]*pinned{}
		b.prevCPUs, b.prevShared = b.cpus, b.shared
	}
	b.cpus, b.shared = cpus, shared
}

// markDirty lists b for the next updates.
func (s *state) markDirty(b *balloon) { s.dirty.Add(b) }

// byTypeAndInstance orders balloons as state.balloons lists them.
func byTypeAndInstance(x, y *balloon) int {
	return cmp.Or(cmp.Compare(x.t.index, y.t.index), cmp.Compare(x.inst, y.inst))
}

// walk calls f for b and each of its parts, at any depth, parents first.
func (b *balloon) walk(f func(*balloon)) {
	f(b)
	for _, p := range b.parts {
		p.walk(f)
	}
}

// insert lists a new balloon (and the instances of its parts, at any
// depth) with the state and with its type.
func (s *state) insert(b *balloon) {
	i, _ := slices.BinarySearchFunc(s.balloons, b, byTypeAndInstance)
	s.balloons = slices.Insert(s.balloons, i, b)
	j, _ := slices.BinarySearchFunc(b.t.own, b, byTypeAndInstance)
	b.t.own = slices.Insert(b.t.own, j, b)
	b.walk(func(p *balloon) {
		k, _ := slices.BinarySearch(p.t.insts, p.inst)
		p.t.insts = slices.Insert(p.t.insts, k, p.inst)
	})
	s.markDirty(b)
}

// deleteBalloon drops an empty balloon and frees its CPUs (a composite
// balloon's: its parts').
func (s *state) deleteBalloon(b *balloon) {
	if i, found := slices.BinarySearchFunc(s.balloons, b, byTypeAndInstance); found {
		s.balloons = slices.Delete(s.balloons, i, i+1)
	}
	if i, found := slices.BinarySearchFunc(b.t.own, b, byTypeAndInstance); found {
		b.t.own = slices.Delete(b.t.own, i, i+1)
	}
	var tree []*balloon
	b.walk(func(p *balloon) {
		tree = append(tree, p)
		if k, found := slices.BinarySearch(p.t.insts, p.inst); found {
			p.t.insts = slices.Delete(p.t.insts, k, k+1)
		}
		if len(p.parts) == 0 {
			s.give(p.cpus)
		}
		p.cpus, p.pin, p.prev = cpuset.Set{}, [pinSlots]*pinned{}, [pinSlots]*pinned{}
	})
	s.dirty.Drop(func(x *balloon) bool { return slices.Contains(tree, x) })
}

// countOwn is how many balloons of t exist, parts not counted.
func (s *state) countOwn(t *btype) int { return len(t.own) }

// nthFreeInstance is the n-th (from 0) lowest instance number of t in use
// by no balloon or part.
func (s *state) nthFreeInstance(t *btype, n int) int {
	next := 0
	for _, inst := range t.insts {
		if inst > next+n {
			break
		}
		if inst >= next {
			n -= inst - next
			next = inst + 1
		}
	}
	return next + n
}
