package balloons

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/sdk/go/kit/dirty"
	"github.com/nriwasm/nriwasm/sdk/go/kit/quantity"
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
	// namespaces are its Namespaces, each ready to match.
	namespaces []namespaceGlob
	// related is the type and every type its components reach, at any
	// depth: the types balance-balloons counts instances of.
	related []*btype
	// own are its balloons, by instance; insts the instance numbers in
	// use, as balloons or as parts of composite balloons, sorted.
	own   []*balloon
	insts []int
}

func (t *btype) field(parts ...any) string {
	if t.cfgIndex < 0 {
		return field(parts...)
	}
	return field(append([]any{"balloonTypes", t.cfgIndex}, parts...)...)
}

// container is a container the policy placed.
type container struct {
	id, pod, name, ns string
	milli             int64
	b                 *balloon // nil when preserved
	hideHT            bool
	keepMems          bool     // memory.preserve
	memTypes          memTypes // the memory-type annotation; 0: its balloon type's memoryTypes
	group             string
	claims            []string
	// cpus and mems are what it was last given ("" leaves the runtime's),
	// unless synced: then it holds its balloon's held lists (lists).
	cpus, mems string
	synced     bool
	// spec is what it was created with, to place it again (Reconfigure).
	spec podSpec
}

// lists are the cpuset_cpus and cpuset_mems c was last given.
func (c *container) lists() (cpus, mems string) {
	if c.synced {
		return c.b.held.cpus, c.b.held.mems
	}
	return c.cpus, c.mems
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
	// treeFree counts the free CPUs per node of the CPU tree.
	treeFree  *treeFree
	freeDelta cpuset.Set // CPUs that joined or left free since the last reshare
	ctrs      map[string]*container
	claims    map[string]*claim
	// dirty are the balloons whose containers updates checks next.
	dirty dirty.List[*balloon]
	// pods are the containers in balloons, by pod.
	pods map[string][]*container
	// groups and ids are updates' scratch lists, kept between calls.
	groups []group
	ids    []string
	// open is chooseBalloon's scratch list, kept between calls.
	open []openBalloon
	// shareAdd and shareRm are reshareDelta's scratch lists, delta, keys
	// and zones reshare's.
	shareAdd, shareRm, delta []uint32
	keys                     []int32
	zones                    []zoneIdle
}

func newState(cfg *Config, ix *topoIndex, driver string) (*state, error) {
	s := &state{cfg: cfg, ix: ix, driver: driver, byName: map[string]*btype{}, ctrs: map[string]*container{}, pods: map[string][]*container{},
		claims: map[string]*claim{}, pinCPU: true, pinMemory: true}
	if cfg.PinCPU != nil {
		s.pinCPU = *cfg.PinCPU
	}
	if cfg.PinMemory != nil {
		s.pinMemory = *cfg.PinMemory
	}
	s.available = ix.online
	if a := cfg.AvailableResources.CPU; a != nil {
		// As nri-plugins (setConfig: "Allocation of only online CPUs is
		// allowed"): the listed CPUs that are online, so that one
		// configuration serves a machine whose CPUs are hot-plugged.
		set := a.Set.Intersection(ix.online)
		if a.Kind == quantity.ExcludeCPUSet {
			set = ix.online.Difference(a.Set)
		}
		if set.IsEmpty() {
			return nil, policyconfig.Errorf(field("availableResources", "cpu"), "leaves no CPU")
		}
		s.available = set
	}
	s.free, s.freeCounts, s.freeDelta = make([]bool, len(ix.cpus)), ix.newCounts(), s.available
	s.treeFree = ix.tree.newFree()
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
	for _, t := range s.types {
		for _, c := range t.Components {
			t.parts = append(t.parts, s.byName[c.BalloonType])
		}
	}
	for _, t := range s.types {
		t.related = relatedTypes(t)
	}
	closeTo := make([][]hint, len(s.types)) // by type index
	for _, t := range s.types {
		for _, g := range t.Namespaces {
			t.namespaces = append(t.namespaces, newNamespaceGlob(g))
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
		var near []hint
		if t == s.reserved && !s.reservedSet.IsEmpty() {
			near = append(near, hint{hintReserved, s.reservedSet})
		}
		for j, d := range t.PreferCloseToDevices {
			dev, _ := parseDevice(d) // ParseConfig checked it
			if err := s.ix.unresolvable(dev, d); err != nil {
				return policyconfig.Errorf(t.field("preferCloseToDevices", j), "%v", err)
			}
			cpus, found := s.ix.deviceCPUs(dev)
			cpus = cpus.Intersection(s.available)
			switch {
			case !found:
				policy.Log.Warnf("balloon type %q: %s %q: the node has no such device; ignored", t.Name, t.field("preferCloseToDevices", j), d)
			case dev.kind == devCPU:
				policy.Log.Warnf("balloon type %q: %s %q: nri-plugins finds no CPUs close to a CPU's own directory; ignored, as there (its cache/index0 names its core)", t.Name, t.field("preferCloseToDevices", j), d)
			case cpus.IsEmpty():
				policy.Log.Warnf("balloon type %q: %s %q: no available CPU is close to it; ignored", t.Name, t.field("preferCloseToDevices", j), d)
			default:
				near = append(near, hint{d, cpus})
			}
		}
		if t.PreferIsolCpus {
			near = append(near, hint{hintIsolated, s.ix.isolated})
		}
		if t.PreferCoreType != "" {
			name := hintPCores
			if t.PreferCoreType == "efficient" {
				name = hintECores
			}
			near = append(near, hint{name, s.ix.coreTypeCPUs(t.PreferCoreType)})
		}
		for _, h := range near {
			t.opts.prefer = append(t.opts.prefer, h.cpus)
		}
		closeTo[t.index] = near
	}
	for _, t := range s.types {
		t.opts.avoid = s.farFrom(closeTo, t)
	}
	return s.checkDevices()
}

// hint is a set of CPUs a type prefers, named as nri-plugins names it: a
// preferCloseToDevices entry by its path, or one of its virtual devices
// (hintReserved, hintIsolated, hintPCores, hintECores).
type hint struct {
	name string
	cpus cpuset.Set
}

// nri-plugins' virtual devices: the names it gives the CPU sets a type
// prefers that are no device (balloons-policy.go, virtDev*).
const (
	hintReserved = "reserved CPUs"
	hintIsolated = "isolated CPUs"
	hintPCores   = "performance cores"
	hintECores   = "efficient cores"
)

// farFrom are the CPU sets type t avoids, in the order they apply, as
// nri-plugins' fillFarFromDevices builds a type's preferFarFromDevices:
// the isolated CPUs if the node has any, then every device some type
// prefers (closeTo, by type index), in the order of the types and of each
// type's preferences, each once by name; t avoids each it does not prefer
// itself. A type with devices of its own so avoids the other types'
// devices. Empty sets are left out: avoiding them keeps every CPU.
func (s *state) farFrom(closeTo [][]hint, t *btype) []cpuset.Set {
	var order []hint
	if !s.ix.isolated.IsEmpty() {
		order = append(order, hint{hintIsolated, s.ix.isolated})
	}
	for _, near := range closeTo {
		for _, h := range near {
			if !slices.ContainsFunc(order, func(o hint) bool { return o.name == h.name }) {
				order = append(order, h)
			}
		}
	}
	var avoid []cpuset.Set
	for _, h := range order {
		if !h.cpus.IsEmpty() && !slices.ContainsFunc(closeTo[t.index], func(o hint) bool { return o.name == h.name }) {
			avoid = append(avoid, h.cpus)
		}
	}
	return avoid
}

// relatedTypes is t and every type its components reach, each once (the
// configuration has no loops).
func relatedTypes(t *btype) []*btype {
	out := []*btype{t}
	for i := 0; i < len(out); i++ {
		for _, p := range out[i].parts {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
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
		amount = &quantity.CPUAmount{Kind: quantity.Quantity, Milli: 750}
	}
	f := field("reservedResources", "cpu")
	if amount.IsSet() {
		set := amount.Set
		if amount.Kind == quantity.ExcludeCPUSet {
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
		for s.countOwn(t) < t.MinBalloons {
			if _, err := s.newBalloon(t); err != nil {
				return policyconfig.Errorf(t.field("minBalloons"), "%d balloons of %d CPUs do not fit: %v", t.MinBalloons, t.MinCPUs, err)
			}
		}
	}
	return nil
}

// newBalloon creates an instance of t with its minCPUs (a composite
// balloon: with its parts, composite themselves or not) and lists it.
// Nothing changes on an error.
func (s *state) newBalloon(t *btype) (*balloon, error) {
	if t.MaxBalloons > 0 && s.countOwn(t) >= t.MaxBalloons {
		return nil, fmt.Errorf("balloon type %s has its maxBalloons (%d) already", t.Name, t.MaxBalloons)
	}
	b := s.build(t, map[*btype]int{})
	if err := s.resize(b, int64(t.MinCPUs)*1000); err != nil {
		return nil, err
	}
	s.insert(b)
	return b, nil
}

// build makes an instance of t without CPUs, and its parts as nri-plugins'
// newCompositeBalloon picks them: every component type ("all"), or with
// balance-balloons the first component whose related types have the fewest
// instances. pending counts the instances of each type this build took
// already, so parts of one type get distinct numbers.
func (s *state) build(t *btype, pending map[*btype]int) *balloon {
	b := s.makeBalloon(t, s.nthFreeInstance(t, pending[t]))
	pending[t]++
	s.buildParts(b, pending)
	return b
}

// buildParts makes b's parts (see build).
func (s *state) buildParts(b *balloon, pending map[*btype]int) {
	parts := b.t.parts
	if b.t.ComponentCreation == "balance-balloons" && len(parts) > 0 {
		best, least := parts[0], -1
		for _, p := range parts {
			if n := s.countRelated(p); least < 0 || n < least {
				best, least = p, n
			}
		}
		parts = []*btype{best}
	}
	for _, pt := range parts {
		b.parts = append(b.parts, s.build(pt, pending))
	}
}

// countRelated is how many instances of t and the types its components
// reach exist, as balloons or as parts at any depth (nri-plugins'
// balloonsByDefIncludingComponents).
func (s *state) countRelated(t *btype) int {
	n := 0
	for _, r := range t.related {
		n += len(r.insts)
	}
	return n
}

// resize gives b the CPUs milli needs, within its type's minCPUs and
// maxCPUs (a composite balloon: split evenly over its parts, each rounded
// up, each within its own bounds). Nothing changes on an error.
func (s *state) resize(b *balloon, milli int64) error {
	if len(b.parts) == 0 {
		return s.resizeLeaf(b, milli)
	}
	var saved []savedCPUs
	b.walk(func(x *balloon) { saved = append(saved, savedCPUs{x, x.cpus}) })
	if err := s.resizeComposite(b, milli); err != nil {
		for _, sv := range saved {
			if len(sv.b.parts) == 0 {
				s.give(sv.b.cpus.Difference(sv.cpus))
			}
		}
		for _, sv := range saved {
			if len(sv.b.parts) == 0 {
				s.take(sv.cpus.Difference(sv.b.cpus))
			}
			if !sv.b.cpus.Equal(sv.cpus) {
				s.setCPUs(sv.b, sv.cpus)
			}
		}
		return fmt.Errorf("composite balloon %s: %w", b.name(), err)
	}
	return nil
}

// savedCPUs is a balloon's CPUs before a resize, to roll it back.
type savedCPUs struct {
	b    *balloon
	cpus cpuset.Set
}

// resizeComposite resizes b's parts to an even share of milli (b's own
// minCPUs and maxCPUs bound milli first); b's CPUs become theirs. On an
// error the parts are left as they are: resize rolls them back.
func (s *state) resizeComposite(b *balloon, milli int64) error {
	milli = max(milli, int64(b.t.MinCPUs)*1000)
	if b.t.MaxCPUs > 0 {
		milli = min(milli, int64(b.t.MaxCPUs)*1000)
	}
	per := (milli + int64(len(b.parts)) - 1) / int64(len(b.parts))
	var cpus cpuset.Set
	for _, p := range b.parts {
		var err error
		if len(p.parts) > 0 {
			err = s.resizeComposite(p, per)
		} else {
			err = s.resizeLeaf(p, per)
		}
		if err != nil {
			return err
		}
		cpus = cpus.Union(p.cpus)
	}
	if !cpus.Equal(b.cpus) {
		s.setCPUs(b, cpus)
	}
	return nil
}

// resizeLeaf resizes a balloon that has CPUs of its own.
func (s *state) resizeLeaf(b *balloon, milli int64) error {
	want := int((milli + 999) / 1000)
	if b.t.MaxCPUs > 0 {
		want = min(want, b.t.MaxCPUs)
	}
	want = max(want, b.t.MinCPUs)
	switch have := b.cpus.Size(); {
	case want > have:
		add, ok := s.ix.inflate(b.cpus, s.free, s.nFree, s.freeCounts, s.treeFree, want-have, &b.t.opts)
		if !ok {
			return fmt.Errorf("balloon %s needs %d more CPUs, %d are free", b.name(), want-have, s.nFree)
		}
		s.setCPUs(b, b.cpus.Union(add))
		s.take(add)
	case want < have:
		rm := s.ix.deflate(b.cpus, have-want, &b.t.opts, s.treeFree)
		s.setCPUs(b, b.cpus.Difference(rm))
		s.give(rm)
	}
	return nil
}

// take removes CPUs from the free ones.
func (s *state) take(cpus cpuset.Set) {
	for id := range cpus.All() {
		s.freeCounts.add(s.ix.cpus[id], -1)
		s.ix.tree.add(s.treeFree, id, -1)
		s.free[id] = false
	}
	s.nFree -= cpus.Size()
	s.freeDelta = s.freeDelta.Union(cpus)
}

// give returns CPUs to the free ones.
func (s *state) give(cpus cpuset.Set) {
	for id := range cpus.All() {
		s.freeCounts.add(s.ix.cpus[id], 1)
		s.ix.tree.add(s.treeFree, id, 1)
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
