package topologyaware

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/claims"
)

// claim is a prepared DRA claim and the CPUs it took.
type claim struct {
	uid      string
	spec     *abi.Claim
	parts    []cpuset.Set // per allocation result, its CPUs
	nodes    []uint32     // per allocation result, its NUMA node
	cpus     cpuset.Set   // the union of parts
	cpusText string
	// foreign: restored with CPUs this policy could not take (outside the
	// grantable CPUs, or clashing with another grant); left unaccounted.
	foreign bool
	// devices is the answer to Allocate (restored verbatim).
	devices []*abi.PreparedDevice
}

// answer is the claim's prepared devices, a copy.
func (c *claim) answer() []*abi.PreparedDevice {
	out := make([]*abi.PreparedDevice, len(c.devices))
	for i, d := range c.devices {
		out[i] = d.CloneVT()
	}
	return out
}

// allocate takes want[i] CPUs of result i's node, all or nothing: shared
// CPUs the shared containers can spare, and isolated ones for what those
// cannot cover.
func (s *state) allocate(spec *abi.Claim, want []int) (*claim, error) {
	c := &claim{uid: strings.Clone(spec.GetUid()), spec: spec}
	for i, res := range spec.GetResults() {
		d := s.deviceByName[res.GetDevice()]
		free := d.cpus.Difference(s.exclusive)
		isolated := free.Intersection(s.res.isolated)
		cpus, ok := s.ix.pick(free.Difference(isolated), want[i], s.budgetBelow(nil))
		if !ok && !isolated.IsEmpty() {
			iso, _ := s.ix.pick(isolated, min(want[i], isolated.Size()), nil)
			var rest cpuset.Set
			if rest, ok = s.ix.pick(free.Difference(isolated), want[i]-iso.Size(), s.budgetBelow(nil)); ok {
				cpus = iso.Union(rest)
			}
		}
		if !ok {
			s.give(c.cpus)
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fmt.Sprintf("%s[%d].consumed_capacity", fieldClaimResult, i),
				"%d CPUs of NUMA node %d do not fit: %d of its %d grantable CPUs are not granted, and the shared containers need some of them",
				want[i], d.node, free.Size(), d.cpus.Size())
		}
		c.parts, c.nodes = append(c.parts, cpus), append(c.nodes, d.node)
		c.cpus = c.cpus.Union(cpus)
		s.take(cpus)
	}
	c.cpusText = c.cpus.String()
	env := claimEnvName(c.uid) + "=" + c.cpusText
	for i, res := range spec.GetResults() {
		data, _ := json.Marshal(statusData{CPUSet: c.parts[i].String(), NUMANodes: []uint32{c.nodes[i]}})
		c.devices = append(c.devices, &abi.PreparedDevice{
			Request: res.GetRequest(), Pool: res.GetPool(), Device: res.GetDevice(), ShareId: res.GetShareId(),
			ContainerEdits: &abi.CDIContainerEdits{Env: []string{env}},
			Status: &abi.DeviceStatus{Conditions: []*abi.Condition{{Type: conditionReady, Status: "True", Reason: reasonAllocated,
				Message: fmt.Sprintf("%d CPUs of NUMA node %d", c.parts[i].Size(), c.nodes[i])}}, Data: data},
		})
	}
	s.claims[c.uid] = c
	return c, nil
}

// claimEnvName is the environment variable naming a claim's CPUs:
// DRA_CPUSET_<uid>, the uid as it is ('-' included), as nri-plugins names it.
func claimEnvName(uid string) string { return envPrefix + uid }

// statusData is the JSON of a prepared device's status.
type statusData struct {
	CPUSet    string   `json:"cpuset"`
	NUMANodes []uint32 `json:"numaNodes"`
}

// addClaim records a claim whose CPUs are decided (restored, carried over).
func (s *state) addClaim(c *claim) {
	if !c.foreign {
		s.take(c.cpus)
	}
	s.claims[c.uid] = c
}

// dropClaim forgets a claim and gives its CPUs back.
func (s *state) dropClaim(c *claim) {
	delete(s.claims, c.uid)
	if !c.foreign {
		s.give(c.cpus)
	}
}

// holders lists the live containers pinned to claim uid.
func (s *state) holders(uid string) []string {
	var ids []string
	for _, c := range s.containers() {
		if slices.Contains(c.claims, uid) {
			ids = append(ids, c.id)
		}
	}
	return ids
}

// claimsOf finds the claims a container holds (claims.Finder): by the CDI
// devices the host names for claims, or only when the runtime reports none,
// by the claims' environment variables, whose value is the claim's cpuset.
// A CDI device of ours naming an unknown claim is an error.
func (s *state) claimsOf(spec *abi.Container) ([]*claim, error) {
	f := claims.Finder[*claim]{Driver: s.driver, EnvPrefix: envPrefix, EnvName: claimEnvName, EnvValue: func(c *claim) string { return c.cpusText }}
	return f.Of(spec, s.claims)
}

// holdClaims makes c a holder of claims: pinned to their CPUs (whatever
// pinCPU says: a claim asks for them) and their nodes' memory. A holder
// that requests CPU of its own gets that from shared CPUs too (shareWith).
func (s *state) holdClaims(c *container, claims []*claim, pinMems bool) {
	var nodes []uint32
	c.kind, c.pinCPU, c.cpus, c.claims, c.milli = kindClaim, true, cpuset.Set{}, nil, 0
	for _, cl := range claims {
		c.cpus = c.cpus.Union(cl.cpus)
		c.claims = append(c.claims, cl.uid)
		nodes = append(nodes, cl.nodes...)
		if cl.foreign {
			c.kind = kindFixed
		}
	}
	c.cpusText = c.cpus.String()
	c.pool = s.poolHolding(c.cpus, "")
	if c.pool == nil {
		c.pool = s.pools[0]
	}
	if pinMems {
		c.mems = s.ix.memsOf(cpuset.New(nodes...)).String()
	}
}

// ownCPU is the CPU a claim holder requests of its own, beside its claims:
// none for BestEffort (whose minimal CPU shares the host may turn into a
// milli-CPU or two), as nri-plugins counts no request for it.
func ownCPU(spec *abi.Container) int64 {
	if spec.GetQosClass() == abi.QOSClass_QOS_CLASS_BEST_EFFORT {
		return 0
	}
	return spec.GetResources().GetCpuRequestMilli()
}

// shareWith gives a claim holder that requests CPU of its own, as
// nri-plugins does, the shared CPUs of its claims' pool on top of the
// claims' CPUs: its request is granted there, or in the nearest ancestor
// with room, and it follows that pool's shared CPUs from then on.
func (s *state) shareWith(c *container, pinMems bool) error {
	own := ownCPU(c.spec)
	if own <= 0 || c.kind != kindClaim {
		return nil
	}
	p := c.pool
	for p != nil && p.free() < own {
		p = p.parent
	}
	if p == nil {
		return abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldRequest,
			"%dm of its own CPU, beside its claims' CPUs, fits neither in pool %s nor above it (%dm free at most)",
			own, c.pool.name, s.maxFree())
	}
	c.pool, c.milli = p, own
	if pinMems {
		mems, _ := cpuset.Parse(c.mems)
		c.mems = mems.Union(p.mems).String()
	}
	return nil
}
