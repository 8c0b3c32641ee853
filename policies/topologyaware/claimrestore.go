package topologyaware

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// restoredClaim is a prepared claim of the journal with what its answer
// reported for each result, read once: the CPUs and node of result i are
// parts[i] and nodes[i], ok[i] false when its status data cannot be read.
type restoredClaim struct {
	pc    *abi.PreparedClaim
	parts []cpuset.Set
	nodes []uint32
	ok    []bool
}

// readClaims reads the journal's prepared claims, in uid order.
func readClaims(list []*abi.PreparedClaim) []restoredClaim {
	list = slices.Clone(list)
	slices.SortStableFunc(list, func(a, b *abi.PreparedClaim) int {
		return strings.Compare(a.GetClaim().GetUid(), b.GetClaim().GetUid())
	})
	out := make([]restoredClaim, len(list))
	for i, pc := range list {
		rc := restoredClaim{pc: pc}
		for _, res := range pc.GetClaim().GetResults() {
			cpus, node, ok := restoredPart(pc.GetAllocation().GetDevices(), res)
			rc.parts, rc.nodes, rc.ok = append(rc.parts, cpus), append(rc.nodes, node), append(rc.ok, ok)
		}
		out[i] = rc
	}
	return out
}

// adoptClaims takes prepared claims back, in uid order, with exactly the
// CPUs their answer reported (each prepared device's status data) and that
// answer kept for a repeated Allocate. A claim whose CPUs are not grantable
// on its device's node or clash with an earlier grant is kept as it is,
// unaccounted ("foreign"), as containers with foreign cpusets are — after a
// restart the claim's container runs there whatever this configuration says.
// In a live swap (strict) the running policy still serves, so such a claim
// refuses the new instance instead: its CPUs stay the claim's.
func (s *state) adoptClaims(list []restoredClaim, strict bool) error {
	for _, rc := range list {
		spec := rc.pc.GetClaim()
		uid := spec.GetUid()
		if uid == "" || s.claims[uid] != nil {
			continue
		}
		c := &claim{uid: strings.Clone(uid), spec: spec, devices: rc.pc.GetAllocation().GetDevices()}
		var taken cpuset.Set
		for i, res := range spec.GetResults() {
			cpus, node := rc.parts[i], rc.nodes[i]
			d := s.deviceByName[res.GetDevice()]
			if d != nil {
				node = d.node
			}
			if !rc.ok[i] || d == nil || cpus.IsEmpty() || !cpus.IsSubsetOf(d.cpus) || cpus.Intersects(s.exclusive) || cpus.Intersects(taken) {
				if strict {
					return s.claimConflict(uid, i, cpus)
				}
				if !c.foreign {
					policy.Log.Warnf("claim %s: result %d has CPUs %q this policy cannot take; kept unaccounted", uid, i, cpus)
				}
				c.foreign = true
			}
			taken = taken.Union(cpus)
			c.parts, c.nodes = append(c.parts, cpus), append(c.nodes, node)
		}
		c.cpus, c.cpusText = taken, taken.String()
		s.addClaim(c)
	}
	return nil
}

// claimConflict is the refusal of a swap whose configuration cannot give
// claim uid's result i its CPUs back: FAILED_PRECONDITION, naming the field
// that takes them (the reserved CPUs unless they fall outside the available
// ones).
func (s *state) claimConflict(uid string, i int, cpus cpuset.Set) error {
	field := fieldReserved
	if !cpus.Difference(s.res.available).IsEmpty() {
		field = fieldAvailable
	}
	return liveError(field, "CPUs %q of claim %s (result %d) are not grantable in this configuration, and a prepared claim keeps its CPUs", cpus, uid, i)
}

// claimedCPUs are the CPUs the prepared claims' answers report.
func claimedCPUs(list []restoredClaim) cpuset.Set {
	var all cpuset.Set
	for _, rc := range list {
		for i, cpus := range rc.parts {
			if rc.ok[i] {
				all = all.Union(cpus)
			}
		}
	}
	return all
}

// restoredPart reads the CPUs and node of result res from the prepared
// device that answers it.
func restoredPart(devices []*abi.PreparedDevice, res *abi.DeviceAllocation) (cpuset.Set, uint32, bool) {
	for _, d := range devices {
		if d.GetRequest() != res.GetRequest() || d.GetPool() != res.GetPool() || d.GetDevice() != res.GetDevice() || d.GetShareId() != res.GetShareId() {
			continue
		}
		var data statusData
		if err := json.Unmarshal(d.GetStatus().GetData(), &data); err != nil {
			return cpuset.Set{}, 0, false
		}
		cpus, err := cpuset.Parse(data.CPUSet)
		var node uint32
		if len(data.NUMANodes) > 0 {
			node = data.NUMANodes[0]
		}
		return cpus, node, err == nil
	}
	return cpuset.Set{}, 0, false
}

// carryClaims moves every claim of old into s unchanged, or names the field
// of the configuration that would take their CPUs away.
func (s *state) carryClaims(old *state) error {
	for _, uid := range sortedKeys(old.claims) {
		o := old.claims[uid]
		if !o.foreign {
			for i, part := range o.parts {
				d := s.deviceByName[o.spec.GetResults()[i].GetDevice()]
				if d != nil && part.IsSubsetOf(d.cpus) {
					continue
				}
				return s.claimConflict(uid, i, part)
			}
		}
		c := *o
		s.addClaim(&c)
	}
	return nil
}

// adoptHolder takes back a container holding claims: pinned to them when its
// assignment is their CPUs, else kept as it is.
func (s *state) adoptHolder(pod *abi.PodSandbox, spec *abi.Container, claims []*claim) {
	c := s.adopted(pod, spec, kindClaim)
	mems := c.mems
	s.holdClaims(c, claims, false)
	c.mems = mems
	got := spec.GetAssignment().GetCpusetCpus()
	if own := ownCPU(spec); own > 0 && c.kind == kindClaim {
		// Its claims' CPUs and the shared CPUs of the pool it was given.
		if set, err := cpuset.Parse(got); err == nil {
			for p := c.pool; p != nil; p = p.parent {
				if set.Equal(c.cpus.Union(p.sharedSet())) {
					c.pool, c.milli = p, own
					s.add(c)
					return
				}
			}
		}
	}
	if got != c.cpusText {
		policy.Log.Warnf("container %s: cpuset %q is not its claims' %s; kept as it is", spec.GetId(), got, c.cpusText)
		c.kind, c.cpusText = kindFixed, got
		c.cpus, _ = cpuset.Parse(got)
	}
	s.add(c)
}
