package topologyaware

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// nodeMask is a set of memory nodes, node n being bit n: nri-plugins'
// libmem NodeMask, which also stops at 64 nodes.
type nodeMask uint64

func (m nodeMask) size() int { return bits.OnesCount64(uint64(m)) }

// String is the mask in the kernel's list form ("0,4-5").
func (m nodeMask) String() string {
	var b strings.Builder
	for n := 0; n < 64; {
		if m&(1<<n) == 0 {
			n++
			continue
		}
		end := n
		for end+1 < 64 && m&(1<<(end+1)) != 0 {
			end++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(n))
		if end > n {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(end))
		}
		n = end + 1
	}
	return b.String()
}

// Request priorities by QoS class, as libmem's (a higher one moves later).
const (
	memPrioBestEffort = 0
	memPrioBurstable  = 1 << 10
	memPrioGuaranteed = 1 << 14
	memPrioPreserved  = 1<<15 - 2
)

// memReq is the memory a container is accounted for: libmem's Request.
type memReq struct {
	id    string
	size  int64 // its memory request, else its limit
	kinds memKinds
	prio  int
	seq   int64    // creation order: a larger one is younger
	zone  nodeMask // the nodes it is assigned to
	at    int      // its index in its zone's users
}

// memZone is a set of nodes and the requests assigned to exactly it.
type memZone struct {
	nodes    nodeMask
	kinds    memKinds
	capacity int64
	used     int64 // the sizes of its own users
	users    []*memReq
}

// distGroup is the nodes at one distance from a node.
type distGroup struct {
	dist  uint32
	nodes nodeMask
}

// memAlloc accounts memory per zone as nri-plugins' libmem does: every
// container's request is assigned to a zone (a set of memory nodes); a zone
// is overcommitted when the requests of the zones inside it exceed its
// nodes' MemTotal, and an allocation that overcommits one moves the least
// important requests of it to a wider zone, or fails.
type memAlloc struct {
	off      bool // more than 64 nodes (libmem's masks stop there), or none with memory: no accounting
	all      nodeMask
	kinds    memKinds
	capacity [64]int64
	kindOf   [64]memKinds
	near     [64][]distGroup      // other nodes with memory, by increasing distance
	ofKinds  [memAll + 1]nodeMask // the nodes with memory of one of the kinds, by kinds
	zones    map[nodeMask]*memZone
	reqs     map[string]*memReq
	seq      int64
	// journal of a trial allocation: each moved request's zone before it.
	trial   bool
	reverts map[*memReq]nodeMask
	// dirty: a request was added without resolving an overcommit (a
	// restored one), so some zone may be overcommitted.
	dirty bool
	// watched: zones whose usage is kept as requests come and go (the
	// pools' memory nodes, whose offers every decision computes).
	watched map[nodeMask]*int64
}

// watch keeps the usage of zones up to date as requests are assigned and
// removed, so that usage answers for them at once.
func (a *memAlloc) watch(zones []nodeMask) {
	a.watched = map[nodeMask]*int64{}
	for _, z := range zones {
		u := a.usage(z)
		a.watched[z] = &u
	}
}

// track adds delta to the usage of every watched zone holding zone.
func (a *memAlloc) track(zone nodeMask, delta int64) {
	for w, u := range a.watched {
		if w&zone == zone {
			*u += delta
		}
	}
}

func newMemAlloc(ix *topoIndex) *memAlloc {
	a := &memAlloc{zones: map[nodeMask]*memZone{}, reqs: map[string]*memReq{}}
	for _, n := range ix.NodeIDs() {
		if n >= 64 {
			a.off = true
			return a
		}
		if !ix.HasMemory(n) {
			continue
		}
		a.all |= 1 << n
		a.capacity[n] = int64(ix.Node(n).GetMemoryBytes())
		a.kindOf[n] = ix.kindOf(n)
		a.kinds |= a.kindOf[n]
	}
	if a.all == 0 {
		a.off = true // no node reports its memory: nothing to account
		return a
	}
	for k := range a.ofKinds {
		for n := range a.each(a.all) {
			if a.kindOf[n]&memKinds(k) != 0 {
				a.ofKinds[k] |= 1 << n
			}
		}
	}
	for n := range a.each(a.all) {
		var groups []distGroup
		for m := range a.each(a.all &^ (1 << n)) {
			d := ix.Distance(uint32(n), uint32(m))
			i := slices.IndexFunc(groups, func(g distGroup) bool { return g.dist == d })
			if i < 0 {
				groups = append(groups, distGroup{dist: d})
				i = len(groups) - 1
			}
			groups[i].nodes |= 1 << m
		}
		slices.SortFunc(groups, func(x, y distGroup) int { return int(x.dist) - int(y.dist) })
		a.near[n] = groups
	}
	return a
}

// each yields the nodes of m in increasing order.
func (a *memAlloc) each(m nodeMask) func(func(int) bool) {
	return func(yield func(int) bool) {
		for m != 0 {
			n := bits.TrailingZeros64(uint64(m))
			if !yield(n) {
				return
			}
			m &^= 1 << n
		}
	}
}

// maskOf is the memory nodes of list (a cpuset of node ids).
func maskOf(nodes []uint32) nodeMask {
	var m nodeMask
	for _, n := range nodes {
		if n < 64 {
			m |= 1 << n
		}
	}
	return m
}

// byKinds is the nodes with memory of one of kinds.
func (a *memAlloc) byKinds(kinds memKinds) nodeMask { return a.ofKinds[kinds&memAll] }

// kindsOf is the kinds of memory in zone.
func (a *memAlloc) kindsOf(zone nodeMask) memKinds {
	var k memKinds
	for n := range a.each(zone & a.all) {
		k |= a.kindOf[n]
	}
	return k
}

// capacityOf is the MemTotal of zone's nodes.
func (a *memAlloc) capacityOf(zone nodeMask) int64 {
	var c int64
	for n := range a.each(zone & a.all) {
		c += a.capacity[n]
	}
	return c
}

// usage is the size of every request assigned to zone or to a zone inside
// it (libmem: an allocation fits a zone when its nodes are a subset).
func (a *memAlloc) usage(zone nodeMask) int64 {
	if u, ok := a.watched[zone]; ok {
		return *u
	}
	var u int64
	for nodes, z := range a.zones {
		if zone&nodes == nodes {
			u += z.used
		}
	}
	return u
}

func (a *memAlloc) free(zone nodeMask) int64 { return a.capacityOf(zone) - a.usage(zone) }

// expand is libmem's default zone expansion: for each kind of kinds, the
// nodes of that kind outside zone closest to one of zone's nodes (zone's
// nodes looked at in order; a later node adds its closest only when they are
// no further than what was found so far).
func (a *memAlloc) expand(zone nodeMask, kinds memKinds) (nodeMask, memKinds) {
	var nodes nodeMask
	var got memKinds
	for _, k := range []memKinds{memDRAM, memPMEM, memHBM} {
		if kinds&k == 0 {
			continue
		}
		of := a.byKinds(k) &^ zone
		var close nodeMask
		best := ^uint32(0)
		for n := range a.each(zone & a.all) {
			for _, g := range a.near[n] {
				if g.nodes&of == 0 {
					continue
				}
				if g.dist <= best {
					best = g.dist
					close |= g.nodes & of
				}
				break
			}
		}
		if close != 0 {
			nodes |= close
			got |= k
		}
	}
	return nodes, got
}

// initialZone is libmem's findInitialZone for a request that prefers (not
// requires) kinds: affinity, widened by the closest nodes of the kinds it
// lacks, then narrowed to the nodes of those kinds when any are left.
func (a *memAlloc) initialZone(affinity nodeMask, kinds memKinds) nodeMask {
	zone := affinity & a.all
	if miss := kinds &^ a.kindsOf(zone); miss != 0 {
		n, _ := a.expand(zone, miss)
		zone |= n
	}
	if prefer := zone & a.byKinds(kinds); prefer != 0 {
		zone = prefer
	}
	return zone
}

func (a *memAlloc) assign(zone nodeMask, r *memReq) {
	z := a.zones[zone]
	if z == nil {
		z = &memZone{nodes: zone, kinds: a.kindsOf(zone), capacity: a.capacityOf(zone)}
		a.zones[zone] = z
	}
	r.at = len(z.users)
	z.users = append(z.users, r)
	z.used += r.size
	if r.size != 0 {
		a.track(zone, r.size)
	}
	r.zone = zone
}

func (a *memAlloc) unassign(r *memReq) {
	z := a.zones[r.zone]
	if z == nil {
		return
	}
	// Users are kept in no order (every sort of them is total): the last
	// takes r's place.
	if i := r.at; i < len(z.users) && z.users[i] == r {
		last := z.users[len(z.users)-1]
		z.users[i], last.at = last, i
		z.users[len(z.users)-1] = nil
		z.users = z.users[:len(z.users)-1]
		z.used -= r.size
		if r.size != 0 {
			a.track(r.zone, -r.size)
		}
	}
	if len(z.users) == 0 && !a.trial {
		delete(a.zones, r.zone)
	}
	r.zone = 0
}

func (a *memAlloc) move(zone nodeMask, r *memReq) {
	if a.trial {
		if _, ok := a.reverts[r]; !ok {
			a.reverts[r] = r.zone
		}
	}
	a.unassign(r)
	a.assign(zone, r)
}

// overcommitted lists the zones meeting nodes (all when 0) whose requests
// exceed their capacity, and by how much, in libmem's order: more users
// first, a zone before the zones holding it, larger zones, larger masks.
func (a *memAlloc) overcommitted(nodes nodeMask) ([]nodeMask, map[nodeMask]int64) {
	var oc []nodeMask
	var spill map[nodeMask]int64
	for z := range a.zones {
		if nodes == 0 || z&nodes != 0 {
			if f := a.free(z); f < 0 {
				if spill == nil {
					spill = map[nodeMask]int64{}
				}
				oc = append(oc, z)
				spill[z] = -f
			}
		}
	}
	slices.SortFunc(oc, func(z1, z2 nodeMask) int {
		if d := len(a.zones[z2].users) - len(a.zones[z1].users); d != 0 {
			return d
		}
		switch {
		case z1&z2 == z1:
			return -1
		case z1&z2 == z2:
			return 1
		}
		if d := z2.size() - z1.size(); d != 0 {
			return d
		}
		switch {
		case z2 > z1:
			return 1
		case z2 < z1:
			return -1
		}
		return 0
	})
	return oc, spill
}

// resolve is libmem's default overcommit handler: zone by zone, it moves
// requests up to a priority (Burstable, then Guaranteed, then Preserved) to
// the zone widened by its own kinds, then also DRAM, PMEM and HBM, the
// lowest priority, then smallest, then youngest first, until nothing
// meeting nodes is overcommitted; it fails when a round moves nothing.
func (a *memAlloc) resolve(nodes nodeMask) error {
	oc, spill := a.overcommitted(nodes)
	for len(oc) > 0 {
		moved := int64(0)
		for _, prio := range []int{memPrioBurstable, memPrioGuaranteed, memPrioPreserved} {
			kinds := memKinds(0)
			for _, extra := range []memKinds{0, memDRAM, memPMEM, memHBM} {
				if extra != 0 {
					if extra &= a.kinds; extra == 0 {
						continue
					}
					kinds |= extra
				}
				for _, z := range oc {
					if amount, ok := spill[z]; ok {
						moved += a.shrink(z, amount, prio, kinds)
					}
				}
				if oc, spill = a.overcommitted(nodes); len(oc) == 0 {
					return nil
				}
			}
		}
		if moved == 0 {
			break
		}
	}
	var names []string
	var total int64
	for _, z := range oc {
		names = append(names, z.String())
		total += spill[z]
	}
	return fmt.Errorf("memory nodes %s would be overcommitted by %d bytes", strings.Join(names, " and "), total)
}

// shrink moves requests of zone (up to priority limit) to zone widened by
// its kinds and extra, until amount bytes moved; it returns what it moved.
func (a *memAlloc) shrink(zone nodeMask, amount int64, limit int, extra memKinds) int64 {
	z := a.zones[zone]
	if z == nil || len(z.users) == 0 {
		return 0
	}
	wider, _ := a.expand(zone, z.kinds|extra)
	if wider == 0 {
		return 0
	}
	var cand []*memReq
	for _, r := range z.users {
		if r.prio <= limit {
			cand = append(cand, r)
		}
	}
	slices.SortFunc(cand, func(x, y *memReq) int {
		if x.prio != y.prio {
			return x.prio - y.prio
		}
		if x.size != y.size {
			if x.size < y.size {
				return -1
			}
			return 1
		}
		return int(y.seq - x.seq) // the younger first
	})
	moved := int64(0)
	for _, r := range cand {
		a.move(zone|wider, r)
		moved += r.size
		if moved >= amount {
			break
		}
	}
	return moved
}

// memOffer is what allocating a request with an affinity would give: its
// zone and the requests that would move, or why it cannot be had.
type memOffer struct {
	zone  nodeMask
	n     int      // zone's nodes
	kinds memKinds // of zone's memory
	moves map[string]nodeMask
	err   error
}

// offer is libmem's GetOffer: the request allocated for a trial and undone.
// Most offers never overcommit anything: they are answered without
// touching the zones.
func (a *memAlloc) offer(r memReq, affinity nodeMask) memOffer {
	if affinity&a.all == 0 {
		return memOffer{err: fmt.Errorf("no memory nodes of kinds %s", r.kinds)}
	}
	zone := a.initialZone(affinity, r.kinds)
	if a.fits(zone, r.size) {
		return memOffer{zone: zone, n: zone.size(), kinds: a.kindsOf(zone)}
	}
	a.trial, a.reverts = true, map[*memReq]nodeMask{}
	tmp := r
	tmp.seq = a.seq + 1 // the youngest
	a.assign(zone, &tmp)
	err := a.resolve(zone)
	o := memOffer{zone: tmp.zone, err: err}
	for q, was := range a.reverts {
		if q == &tmp {
			continue
		}
		if o.moves == nil {
			o.moves = map[string]nodeMask{}
		}
		o.moves[q.id] = q.zone
		a.unassign(q)
		a.assign(was, q)
	}
	a.unassign(&tmp)
	a.trial, a.reverts = false, nil
	for z, zz := range a.zones {
		if len(zz.users) == 0 {
			delete(a.zones, z)
		}
	}
	if err != nil {
		return memOffer{err: err}
	}
	o.n, o.kinds = o.zone.size(), a.kindsOf(o.zone)
	return o
}

// fits tells whether size more in zone overcommits nothing: neither zone
// (a new one counts what the zones inside it hold) nor a zone holding it
// runs out, and nothing is overcommitted already.
func (a *memAlloc) fits(zone nodeMask, size int64) bool {
	if a.dirty {
		if oc, _ := a.overcommitted(0); len(oc) > 0 {
			return false
		}
		a.dirty = false
	}
	if _, ok := a.zones[zone]; (!ok || size > 0) && a.free(zone) < size {
		return false
	}
	if size == 0 {
		return true
	}
	for nodes := range a.zones {
		if nodes&zone == zone && nodes != zone && a.free(nodes) < size {
			return false
		}
	}
	return true
}

// add assigns r to zone as it is, without looking for overcommit (a
// restored or carried-over container keeps its memory nodes).
func (a *memAlloc) add(r *memReq, zone nodeMask) {
	if a.off || zone == 0 {
		return
	}
	if r.seq == 0 {
		a.seq++
		r.seq = a.seq
	}
	if !a.dirty && !a.fits(zone, r.size) {
		a.dirty = true // looked at by the next fits
	}
	a.reqs[r.id] = r
	a.assign(zone, r)
}

// release forgets request id.
func (a *memAlloc) release(id string) {
	if r := a.reqs[id]; r != nil {
		a.unassign(r)
		delete(a.reqs, id)
	}
}

// memPrio is the priority of a container's request, by its QoS class.
func memPrio(q abi.QOSClass) int {
	switch q {
	case abi.QOSClass_QOS_CLASS_GUARANTEED:
		return memPrioGuaranteed
	case abi.QOSClass_QOS_CLASS_BURSTABLE:
		return memPrioBurstable
	}
	return memPrioBestEffort
}
