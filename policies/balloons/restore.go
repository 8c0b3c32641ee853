package balloons

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/kit/expr"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// restored is one balloon being rebuilt from the journal.
type restored struct {
	t     *btype
	inst  int
	ctrs  []*container
	cpus  cpuset.Set // the union of what its containers were given
	claim *abi.PreparedClaim
}

// restore takes back the journal: every prepared claim bound to its device's
// instance, every container in the balloon it was placed in (the
// balloons.nriwasm.io/balloon annotation of its assignment; without one, its
// type's balloon whose containers have the same CPUs), each balloon with the
// CPUs its containers were given. CPUs two balloons' containers were both
// given are idle shared CPUs, and nobody's own. Nothing answers an update
// now: a balloon rebuilt with other CPUs than its containers hold tells
// them with the next call's updates. A claim naming no balloon device of
// this configuration is dropped after a restart; in a live swap (strict),
// where the running policy still serves, it refuses the new instance.
func (s *state) restore(rs *abi.RestoreState, strict bool) error {
	groups := map[[2]any]*restored{}
	get := func(t *btype, inst int) *restored {
		k := [2]any{t.Name, inst}
		if groups[k] == nil {
			groups[k] = &restored{t: t, inst: inst}
		}
		return groups[k]
	}
	for _, pc := range rs.GetClaims() {
		t, inst, ok := s.parseDevice(pc.GetClaim().GetResults())
		if !ok && strict {
			return abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "config.balloonTypes",
				"prepared claim %s names no balloon device of this configuration, and a prepared claim keeps its balloon", pc.GetClaim().GetUid())
		}
		if !ok {
			policy.Log.Warnf("restore: claim %s names no balloon device of this configuration; dropped", pc.GetClaim().GetUid())
			continue
		}
		get(t, inst).claim = pc
	}
	pods := map[string]*abi.PodSandbox{}
	for _, p := range rs.GetPods() {
		pods[p.GetId()] = p
	}
	bySet := map[string]int{} // type and CPUs → instance, for containers without the annotation
	specs := slices.Clone(rs.GetContainers())
	slices.SortFunc(specs, func(a, b *abi.Container) int { return cmp.Compare(a.GetId(), b.GetId()) })
	for _, spec := range specs {
		id := spec.GetId()
		if id == "" || s.ctrs[id] != nil || spec.GetState() == abi.ContainerState_CONTAINER_STATE_STOPPED {
			continue
		}
		pod := pods[spec.GetPodSandboxId()]
		c := s.newContainer(pod, spec)
		a := spec.GetAssignment()
		c.cpus, c.mems = strings.Clone(a.GetCpusetCpus()), strings.Clone(a.GetCpusetMems())
		c.spec = encodeSpec(pod, spec)
		s.ctrs[id] = c
		cpus, err := cpuset.Parse(c.cpus)
		if s.preserved(pod, spec) || err != nil {
			continue
		}
		t, inst, ok := s.parseAssigned(a.GetAnnotations()[keyAssigned])
		if !ok {
			if t, err = s.chooseType(pod, spec); err != nil {
				continue
			}
			k := t.Name + "/" + c.cpus
			if _, seen := bySet[k]; !seen {
				bySet[k] = -1 - len(bySet) // numbered below, after the annotated ones
			}
			inst = bySet[k]
		}
		if t.GroupBy != "" {
			c.group, _ = expr.Expand(t.GroupBy, func(k string) (string, bool) { return expr.Value(k, pod, spec) })
		}
		c.hideHT = t.hideHT
		if v, ok := boolAnnotation(pod, spec, containers.KeyHideHyperthreads); ok {
			c.hideHT = v
		}
		c.memTypes = memoryTypesOf(pod, spec, t, c.keepMems)
		g := get(t, inst)
		g.ctrs = append(g.ctrs, c)
		g.cpus = g.cpus.Union(cpus.Intersection(s.available))
	}
	s.rebuild(groups)
	return nil
}

// rebuild makes the balloons of the restored groups.
func (s *state) rebuild(groups map[[2]any]*restored) {
	list := make([]*restored, 0, len(groups))
	for _, g := range groups {
		list = append(list, g)
	}
	slices.SortFunc(list, func(a, b *restored) int {
		return cmp.Or(cmp.Compare(a.t.index, b.t.index), cmp.Compare(a.inst, b.inst))
	})
	// Groups without an annotation get the lowest instances no other uses.
	used := map[*btype]map[int]bool{}
	for _, g := range list {
		if used[g.t] == nil {
			used[g.t] = map[int]bool{}
		}
		used[g.t][g.inst] = true
	}
	for _, g := range list {
		if g.inst < 0 {
			i := 0
			for used[g.t][i] {
				i++
			}
			g.inst, used[g.t][i] = i, true
		}
	}
	slices.SortFunc(list, func(a, b *restored) int {
		return cmp.Or(cmp.Compare(a.t.index, b.t.index), cmp.Compare(a.inst, b.inst))
	})
	seen := map[uint32]int{}
	for _, g := range list {
		for _, id := range g.cpus.Sorted() {
			seen[id]++
		}
	}
	for _, g := range list {
		if g.t.MaxBalloons > 0 && s.countOwn(g.t) >= g.t.MaxBalloons && !g.t.PublishDRADevices {
			policy.Log.Warnf("restore: balloon %s[%d] is over maxBalloons; its containers keep their CPUs unmanaged", g.t.Name, g.inst)
			continue
		}
		b := s.makeBalloon(g.t, g.inst)
		var own []uint32
		for _, id := range g.cpus.Sorted() {
			if seen[id] == 1 && s.free[id] {
				own = append(own, id)
			}
		}
		if len(g.t.parts) == 0 {
			s.setCPUs(b, cpuset.New(own...))
			s.take(b.cpus)
		}
		s.insert(b)
		for _, c := range g.ctrs {
			sent := [2]string{c.cpus, c.mems}
			s.join(c, b)
			c.cpus, c.mems = sent[0], sent[1]
		}
		if g.claim != nil {
			c := s.bind(g.claim.GetClaim(), b)
			c.devices = g.claim.GetAllocation().GetDevices()
		}
	}
	// Composite balloons get their parts once every restored instance
	// number is taken, then CPUs with the others': fit every rebuilt
	// balloon to its bounds and requests.
	for _, b := range s.balloons {
		if len(b.t.parts) > 0 {
			s.buildParts(b, map[*btype]int{})
			for _, p := range b.parts {
				p.walk(func(x *balloon) {
					k, _ := slices.BinarySearch(x.t.insts, x.inst)
					x.t.insts = slices.Insert(x.t.insts, k, x.inst)
				})
			}
		}
	}
	for _, b := range s.balloons {
		want := int64(b.t.MinCPUs) * 1000
		if len(b.members) > 0 {
			want = max(want, b.milli, 1)
		}
		if err := s.resize(b, max(want, int64(min(b.cpus.Size(), s.maxCPUsOf(b.t)))*1000)); err != nil {
			policy.Log.Warnf("restore: balloon %s: %v", b.name(), err)
		}
	}
}

// maxCPUsOf is a type's maxCPUs, or no limit.
func (s *state) maxCPUsOf(t *btype) int {
	if t.MaxCPUs > 0 {
		return t.MaxCPUs
	}
	return s.available.Size()
}

// parseAssigned reads "TYPE[N]".
func (s *state) parseAssigned(v string) (*btype, int, bool) {
	name, rest, ok := strings.Cut(v, "[")
	n, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
	t := s.byName[name]
	if !ok || err != nil || n < 0 || t == nil || !strings.HasSuffix(rest, "]") {
		return nil, 0, false
	}
	return t, n, true
}

// parseDevice finds the type and instance of a claim's device.
func (s *state) parseDevice(results []*abi.DeviceAllocation) (*btype, int, bool) {
	if len(results) == 0 {
		return nil, 0, false
	}
	for _, t := range s.types {
		for i := range t.MaxBalloons {
			if t.PublishDRADevices && deviceName(t.Name, i) == results[0].GetDevice() {
				return t, i, true
			}
		}
	}
	return nil, 0, false
}
