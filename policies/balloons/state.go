package balloons

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// btype is a balloon type resolved against the topology.
type btype struct {
	*BalloonType
	index int // in the resolved list (built-ins included)
	// cfgIndex is its balloonTypes index; -1 for an implicit built-in.
	cfgIndex  int
	opts      allocOpts
	pinMemory bool
	hideHT    bool
	parts     []*btype
}

func (t *btype) field(parts ...any) string {
	if t.cfgIndex < 0 {
		return field(parts...)
	}
	return field(append([]any{"balloonTypes", t.cfgIndex}, parts...)...)
}

// balloon is one instance of a type: CPUs of its own, the idle CPUs it
// shares, and its containers. A composite balloon's CPUs are its parts'.
type balloon struct {
	t      *btype
	inst   int
	cpus   cpuset.Set
	shared cpuset.Set
	ctrs   map[string]*container
	milli  int64 // the containers' requests
	pods   map[string]int
	nss    map[string]int
	groups map[string]int
	parts  []*balloon
	claim  string // the DRA claim bound to it
	// zone is what shareIdleCPUsInSame covers around zoneOf, its CPUs when
	// the zone was last computed.
	zone, zoneOf cpuset.Set
}

func (b *balloon) name() string { return fmt.Sprintf("%s[%d]", b.t.Name, b.inst) }

// pinnable are the CPUs its containers may use.
func (b *balloon) pinnable() cpuset.Set { return b.cpus.Union(b.shared) }

// container is a container the policy placed.
type container struct {
	id, pod, name, ns string
	milli             int64
	b                 *balloon // nil when preserved
	hideHT            bool
	keepMems          bool // memory.preserve
	group             string
	claims            []string
	// cpus and mems are what it was last given ("" leaves the runtime's).
	cpus, mems string
}

// state is everything the policy decided since Init.
type state struct {
	cfg       *Config
	ix        *topoIndex
	driver    string
	types     []*btype
	byName    map[string]*btype
	reserved  *btype
	deflt     *btype
	available cpuset.Set
	// reservedSet is reservedResources.cpu as a cpuset; empty for a quantity.
	reservedSet cpuset.Set
	pinCPU      bool
	pinMemory   bool
	balloons    []*balloon // sorted by type, then instance
	// free marks the available CPUs in no balloon, by id; nFree counts
	// them, freeCounts per core, cache, node, die and package.
	free       []bool
	nFree      int
	freeCounts *counts
	freeDelta  cpuset.Set // CPUs that joined or left free since the last reshare
	ctrs       map[string]*container
	specs      map[string]podSpec // what each container was created with, encoded
	claims     map[string]*claim
	dirty      map[*balloon]bool
}

func newState(cfg *Config, ix *topoIndex, driver string) (*state, error) {
	s := &state{cfg: cfg, ix: ix, driver: driver, byName: map[string]*btype{}, ctrs: map[string]*container{}, specs: map[string]podSpec{},
		claims: map[string]*claim{}, dirty: map[*balloon]bool{}, pinCPU: true, pinMemory: true}
	if cfg.PinCPU != nil {
		s.pinCPU = *cfg.PinCPU
	}
	if cfg.PinMemory != nil {
		s.pinMemory = *cfg.PinMemory
	}
	s.available = ix.online
	if a := cfg.AvailableResources.CPU; a != nil {
		set := a.Set
		if a.Exclude {
			set = ix.online.Difference(a.Set)
		} else if out := set.Difference(ix.online); !out.IsEmpty() {
			return nil, policyconfig.Errorf(field("availableResources", "cpu"), "CPUs %s are not online (online: %s)", out, ix.online)
		}
		if set.IsEmpty() {
			return nil, policyconfig.Errorf(field("availableResources", "cpu"), "leaves no CPU")
		}
		s.available = set
	}
	s.free, s.freeCounts, s.freeDelta = make([]bool, len(ix.cpus)), ix.newCounts(), s.available
	s.give(s.available)
	if err := s.resolveTypes(); err != nil {
		return nil, err
	}
	return s, nil
}

// resolveTypes adds the built-in types where the configuration lacks them
// and turns preferences into CPU sets.
func (s *state) resolveTypes() error {
	var list []*btype
	for i, t := range s.cfg.BalloonTypes {
		c := *t
		list = append(list, &btype{BalloonType: &c, cfgIndex: i})
	}
	has := func(name string) bool {
		return slices.ContainsFunc(list, func(t *btype) bool { return t.Name == name })
	}
	if !has(reservedType) {
		list = append([]*btype{{BalloonType: &BalloonType{Name: reservedType, AllocatorPriority: "low"}, cfgIndex: -1}}, list...)
	}
	if !has(defaultType) {
		list = append(list, &btype{BalloonType: &BalloonType{Name: defaultType, MinBalloons: 1, MaxBalloons: 1, AllocatorPriority: "low"}, cfgIndex: -1})
	}
	for i, t := range list {
		t.index = i
		s.types = append(s.types, t)
		s.byName[t.Name] = t
	}
	s.reserved, s.deflt = s.byName[reservedType], s.byName[defaultType]
	if err := s.resolveReserved(); err != nil {
		return err
	}
	var devicesOf []cpuset.Set // CPUs near any type's devices
	for _, t := range s.types {
		for _, c := range t.Components {
			t.parts = append(t.parts, s.byName[c.BalloonType])
		}
		if t.PublishDRADevices {
			t.MinBalloons = t.MaxBalloons
		}
		t.pinMemory = s.pinMemory
		if t.PinMemory != nil {
			t.pinMemory = *t.PinMemory
		}
		t.hideHT = t.HideHyperthreads != nil && *t.HideHyperthreads
		t.opts.balance, t.opts.spread = s.cfg.AllocatorTopologyBalancing, s.cfg.PreferSpreadOnPhysicalCores
		if t.AllocatorTopologyBalancing != nil {
			t.opts.balance = *t.AllocatorTopologyBalancing
		}
		if t.PreferSpreadOnPhysicalCores != nil {
			t.opts.spread = *t.PreferSpreadOnPhysicalCores
		}
		for j, d := range t.PreferCloseToDevices {
			dev, _ := parseDevice(d) // ParseConfig checked it
			cpus, found := s.ix.deviceCPUs(dev)
			cpus = cpus.Intersection(s.available)
			switch {
			case !found:
				policy.Log.Warnf("balloon type %q: %s %q: the node has no such device; ignored", t.Name, t.field("preferCloseToDevices", j), d)
			case cpus.IsEmpty():
				policy.Log.Warnf("balloon type %q: %s %q: no available CPU is close to it; ignored", t.Name, t.field("preferCloseToDevices", j), d)
			default:
				t.opts.prefer = append(t.opts.prefer, cpus)
				devicesOf = append(devicesOf, cpus)
			}
		}
		if t.PreferIsolCpus {
			t.opts.prefer = append(t.opts.prefer, s.ix.isolated)
		}
		if t.PreferCoreType != "" {
			t.opts.prefer = append(t.opts.prefer, s.ix.coreTypeCPUs(t.PreferCoreType))
		}
	}
	for _, t := range s.types {
		if t == s.reserved && !s.reservedSet.IsEmpty() {
			t.opts.prefer = append([]cpuset.Set{s.reservedSet}, t.opts.prefer...)
			continue
		}
		t.opts.avoid = s.reservedSet
		if !t.PreferIsolCpus {
			t.opts.avoid = t.opts.avoid.Union(s.ix.isolated)
		}
		if len(t.PreferCloseToDevices) == 0 {
			for _, d := range devicesOf {
				t.opts.avoid = t.opts.avoid.Union(d)
			}
		}
	}
	return s.checkDevices()
}

// resolveReserved sizes the reserved type from reservedResources.cpu: a
// cpuset it prefers (and every other type avoids), or a quantity that is its
// minCPUs. Default 750m.
func (s *state) resolveReserved() error {
	t := s.reserved
	t.MinBalloons, t.MaxBalloons = 1, 1
	t.Namespaces = append(slices.Clone(t.Namespaces), "kube-system")
	t.Namespaces = append(t.Namespaces, s.cfg.ReservedPoolNamespaces...)
	amount := s.cfg.ReservedResources.CPU
	if amount == nil {
		amount = &CPUAmount{Milli: 750}
	}
	f := field("reservedResources", "cpu")
	if amount.isSet() {
		set := amount.Set
		if amount.Exclude {
			set = s.available.Difference(set)
		}
		if out := set.Difference(s.available); !out.IsEmpty() {
			return policyconfig.Errorf(f, "CPUs %s are not available (available: %s)", out, s.available)
		}
		if set.IsEmpty() {
			return policyconfig.Errorf(f, "leaves no CPU")
		}
		s.reservedSet = set
		if t.MinCPUs == 0 {
			t.MinCPUs = set.Size()
			if t.MaxCPUs > 0 {
				t.MinCPUs = min(t.MinCPUs, t.MaxCPUs)
			}
		}
		if t.AllocatorPriority == "" || t.AllocatorPriority.rank() > 1 {
			t.AllocatorPriority = "normal"
		}
		return nil
	}
	count := int((amount.Milli + 999) / 1000)
	switch {
	case count == 0:
		return policyconfig.Errorf(f, "0: some CPU must be reserved")
	case t.MinCPUs == 0 && t.MaxCPUs > 0 && t.MaxCPUs < count:
		return policyconfig.Errorf(t.field("maxCPUs"), "%d is below reservedResources.cpu (%d CPUs)", t.MaxCPUs, count)
	case t.MinCPUs != 0 && t.MinCPUs != count:
		return policyconfig.Errorf(t.field("minCPUs"), "%d does not match reservedResources.cpu (%d CPUs)", t.MinCPUs, count)
	}
	t.MinCPUs = count
	return nil
}

// createMinBalloons creates every type's minBalloons, by allocatorPriority
// and then list order.
func (s *state) createMinBalloons() error {
	order := slices.Clone(s.types)
	slices.SortStableFunc(order, func(a, b *btype) int { return cmp.Compare(a.AllocatorPriority.rank(), b.AllocatorPriority.rank()) })
	for _, t := range order {
		for s.count(t) < t.MinBalloons {
			if _, err := s.newBalloon(t); err != nil {
				return policyconfig.Errorf(t.field("minBalloons"), "%d balloons of %d CPUs do not fit: %v", t.MinBalloons, t.MinCPUs, err)
			}
		}
	}
	return nil
}

// count is how many instances of t exist, as balloons or as parts.
func (s *state) count(t *btype) int {
	n := 0
	for _, b := range s.balloons {
		if b.t == t {
			n++
		}
		for _, p := range b.parts {
			if p.t == t {
				n++
			}
		}
	}
	return n
}

// freeInstance is the lowest instance number of t in use by no balloon.
func (s *state) freeInstance(t *btype) int {
	used := map[int]bool{}
	for _, b := range s.balloons {
		if b.t == t {
			used[b.inst] = true
		}
		for _, p := range b.parts {
			if p.t == t {
				used[p.inst] = true
			}
		}
	}
	i := 0
	for used[i] {
		i++
	}
	return i
}

// newBalloon creates an instance of t with its minCPUs (a composite
// balloon: with its parts) and lists it. Nothing changes on an error.
func (s *state) newBalloon(t *btype) (*balloon, error) {
	if t.MaxBalloons > 0 && s.countOwn(t) >= t.MaxBalloons {
		return nil, fmt.Errorf("balloon type %s has its maxBalloons (%d) already", t.Name, t.MaxBalloons)
	}
	b := s.makeBalloon(t, s.freeInstance(t))
	if len(t.parts) > 0 {
		parts := t.parts
		if t.ComponentCreation == "balance-balloons" {
			best := parts[0]
			for _, p := range parts[1:] {
				if s.count(p) < s.count(best) {
					best = p
				}
			}
			parts = []*btype{best}
		}
		used := map[*btype]int{}
		for _, pt := range parts {
			p := s.makeBalloon(pt, s.freeInstance(pt)+used[pt])
			used[pt]++
			b.parts = append(b.parts, p)
		}
	}
	if err := s.resize(b, int64(t.MinCPUs)*1000); err != nil {
		return nil, err
	}
	s.insert(b)
	return b, nil
}

func (s *state) makeBalloon(t *btype, inst int) *balloon {
	return &balloon{t: t, inst: inst, ctrs: map[string]*container{}, pods: map[string]int{}, nss: map[string]int{}, groups: map[string]int{}}
}

// countOwn is how many balloons of t exist, parts not counted.
func (s *state) countOwn(t *btype) int {
	n := 0
	for _, b := range s.balloons {
		if b.t == t {
			n++
		}
	}
	return n
}

func (s *state) insert(b *balloon) {
	i, _ := slices.BinarySearchFunc(s.balloons, b, func(x, y *balloon) int {
		return cmp.Or(cmp.Compare(x.t.index, y.t.index), cmp.Compare(x.inst, y.inst))
	})
	s.balloons = slices.Insert(s.balloons, i, b)
	s.dirty[b] = true
}

// deleteBalloon drops an empty balloon and frees its CPUs.
func (s *state) deleteBalloon(b *balloon) {
	s.balloons = slices.DeleteFunc(s.balloons, func(x *balloon) bool { return x == b })
	for _, p := range append([]*balloon{b}, b.parts...) {
		s.give(p.cpus)
		p.cpus = cpuset.Set{}
	}
	delete(s.dirty, b)
}

// resize gives b the CPUs milli needs, within its type's minCPUs and
// maxCPUs (a composite balloon: split evenly over its parts). Nothing
// changes on an error.
func (s *state) resize(b *balloon, milli int64) error {
	if len(b.parts) > 0 {
		old := make([]cpuset.Set, len(b.parts))
		per := (milli + int64(len(b.parts)) - 1) / int64(len(b.parts))
		var cpus cpuset.Set
		for i, p := range b.parts {
			old[i] = p.cpus
			if err := s.resize(p, per); err != nil {
				for j := range i {
					q := b.parts[j]
					s.give(q.cpus.Difference(old[j]))
					s.take(old[j].Difference(q.cpus))
					q.cpus = old[j]
				}
				return fmt.Errorf("composite balloon %s: %w", b.name(), err)
			}
			cpus = cpus.Union(p.cpus)
		}
		if !cpus.Equal(b.cpus) {
			b.cpus = cpus
			s.dirty[b] = true
		}
		return nil
	}
	want := int((milli + 999) / 1000)
	if b.t.MaxCPUs > 0 {
		want = min(want, b.t.MaxCPUs)
	}
	want = max(want, b.t.MinCPUs)
	switch have := b.cpus.Size(); {
	case want > have:
		add, ok := s.ix.inflate(b.cpus, s.free, s.nFree, s.freeCounts, want-have, &b.t.opts)
		if !ok {
			return fmt.Errorf("balloon %s needs %d more CPUs, %d are free", b.name(), want-have, s.nFree)
		}
		b.cpus = b.cpus.Union(add)
		s.take(add)
	case want < have:
		rm := s.ix.deflate(b.cpus, have-want, &b.t.opts)
		b.cpus = b.cpus.Difference(rm)
		s.give(rm)
	default:
		return nil
	}
	s.dirty[b] = true
	return nil
}

// take removes CPUs from the free ones.
func (s *state) take(cpus cpuset.Set) {
	for _, id := range cpus.Sorted() {
		s.freeCounts.add(s.ix.cpus[id], -1)
		s.free[id] = false
	}
	s.nFree -= cpus.Size()
	s.freeDelta = s.freeDelta.Union(cpus)
}

// give returns CPUs to the free ones.
func (s *state) give(cpus cpuset.Set) {
	for _, id := range cpus.Sorted() {
		s.freeCounts.add(s.ix.cpus[id], 1)
		s.free[id] = true
	}
	s.nFree += cpus.Size()
	s.freeDelta = s.freeDelta.Union(cpus)
}

// freeSet is the free CPUs as a set.
func (s *state) freeSet() cpuset.Set {
	ids := make([]uint32, 0, s.nFree)
	for _, id := range s.ix.onlineIDs {
		if s.free[id] {
			ids = append(ids, id)
		}
	}
	return cpuset.New(ids...)
}

// maxCPUs is how many CPUs b may grow to: its type's maxCPUs (a composite
// balloon's: its parts' together), or every CPU it has and all free ones.
func (s *state) maxCPUs(b *balloon) int {
	limit := b.cpus.Size() + s.nFree
	if b.t.MaxCPUs > 0 {
		limit = min(limit, b.t.MaxCPUs)
	}
	if len(b.parts) > 0 {
		least := -1
		for _, p := range b.parts {
			if m := s.maxCPUs(p); least < 0 || m < least {
				least = m
			}
		}
		limit = min(limit, least*len(b.parts))
	}
	return limit
}

// reshare recomputes the idle CPUs each balloon shares: the free CPUs,
// isolated ones excepted, in the shareIdleCPUsInSame groups of its CPUs (its
// zone). Only balloons whose CPUs changed or whose zone holds a CPU that
// joined or left the free ones since the last reshare are recomputed.
func (s *state) reshare() {
	if s.freeDelta.IsEmpty() {
		return
	}
	for _, b := range s.balloons {
		lvl := b.t.ShareIdleCPUsInSame
		if lvl == "" {
			continue
		}
		if !b.zoneOf.Equal(b.cpus) {
			b.zoneOf = b.cpus
			if lvl == LevelSystem {
				b.zone = s.available
			} else {
				b.zone = s.ix.within(lvl, b.cpus)
			}
		} else if !b.zone.Intersects(s.freeDelta) {
			continue
		}
		var ids []uint32
		for _, id := range b.zone.Sorted() {
			if s.free[id] && !s.ix.isIsolated[id] {
				ids = append(ids, id)
			}
		}
		if shared := cpuset.New(ids...); !shared.Equal(b.shared) {
			b.shared = shared
			s.dirty[b] = true
		}
	}
	s.freeDelta = cpuset.Set{}
}

// pinning is what b's containers should have now: its CPUs and shared idle
// CPUs (one thread per core for those that hide hyperthreads), and their
// memory nodes; "" for what the configuration leaves alone.
func (s *state) pinning(b *balloon, hideHT bool) (cpus, mems string) {
	set := b.pinnable()
	if hideHT {
		set = s.ix.singleThreads(set)
	}
	if s.pinCPU {
		cpus = set.String()
	}
	if b.t.pinMemory {
		mems = s.ix.memsOf(set, b.t.MemoryTypes).String()
	}
	return cpus, mems
}

// pinContainer records and returns what c gets now.
func (s *state) pinContainer(c *container) (cpus, mems string) {
	cpus, mems = s.pinning(c.b, c.hideHT)
	if c.keepMems {
		mems = ""
	}
	return cpus, mems
}

// updates reshares the idle CPUs, then answers an update for every container
// of a changed balloon whose CPUs or memory nodes changed, except skip (just
// created: its adjustment says it), sorted by container id.
func (s *state) updates(skip string) []*abi.ContainerUpdate {
	s.reshare()
	var out []*abi.ContainerUpdate
	dirty := make([]*balloon, 0, len(s.dirty))
	for b := range s.dirty {
		dirty = append(dirty, b)
	}
	slices.SortFunc(dirty, func(x, y *balloon) int {
		return cmp.Or(cmp.Compare(x.t.index, y.t.index), cmp.Compare(x.inst, y.inst))
	})
	for _, b := range dirty {
		var pin [2][2]string
		var done [2]bool
		for _, id := range sortedKeys(b.ctrs) {
			c := b.ctrs[id]
			h := 0
			if c.hideHT {
				h = 1
			}
			if !done[h] {
				pin[h][0], pin[h][1] = s.pinning(b, c.hideHT)
				done[h] = true
			}
			cpus, mems := pin[h][0], pin[h][1]
			if c.keepMems {
				mems = ""
			}
			u := &abi.ContainerUpdate{ContainerId: id}
			if cpus != c.cpus && cpus != "" {
				u.CpusetCpus, c.cpus = cpus, cpus
			}
			if mems != c.mems && mems != "" {
				u.CpusetMems, c.mems = mems, mems
			}
			if id != skip && (u.CpusetCpus != "" || u.CpusetMems != "") {
				out = append(out, u)
			}
		}
	}
	clear(s.dirty)
	slices.SortFunc(out, func(a, b *abi.ContainerUpdate) int { return cmp.Compare(a.ContainerId, b.ContainerId) })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
