package topologyaware

import (
	"fmt"
	"strconv"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/claims"
	"github.com/nriwasm/nriwasm/sdk/go/kit/quantity"
)

// DRA: one device per NUMA node with grantable CPUs, as
// kubernetes-sigs/dra-driver-cpu's grouped mode publishes them. A claim
// consumes whole CPUs of a node (capacity dra.cpu/cpu); the policy takes them
// out of the shared CPUs and pins the claim's containers to them.
const (
	deviceFormat     = "cpudevnuma%03d"
	attrNUMANode     = "resource.kubernetes.io/numaNode"
	attrSocketID     = "dra.cpu/socketID"
	attrSMTEnabled   = "dra.cpu/smtEnabled"
	capacityCPU      = "dra.cpu/cpu"
	envPrefix        = "DRA_CPUSET_"
	defaultDriver    = Name + ".nri.io"
	conditionReady   = "Ready"
	reasonAllocated  = "CPUsAllocated"
	fieldDRAEnabled  = "config.dra.enabled"
	fieldClaimUID    = "claim.uid"
	fieldClaimResult = "claim.results"
)

// nodeDevice is the DRA device of one NUMA node.
type nodeDevice struct {
	name string
	node uint32
	cpus cpuset.Set // its grantable CPUs: (sharable ∪ isolated) − reserved
}

// buildDevices lists a device for every NUMA node with grantable CPUs, in
// node order. Isolated CPUs count, as nri-plugins counts a node's isolated
// and sharable CPUs less the reserved ones: a claim's CPUs are exclusive,
// which is what isolated CPUs are for.
func (s *state) buildDevices() {
	byNode := map[uint32][]uint32{}
	for _, id := range s.pools[0].sharable.Union(s.res.isolated.Difference(s.res.reserved)).Sorted() {
		n := s.ix.cpus[id].node
		byNode[n] = append(byNode[n], id)
	}
	s.devices, s.deviceByName = nil, map[string]*nodeDevice{}
	for _, n := range sortedNodes(byNode) {
		d := &nodeDevice{name: fmt.Sprintf(deviceFormat, n), node: n, cpus: cpuset.New(byNode[n]...)}
		s.devices = append(s.devices, d)
		s.deviceByName[d.name] = d
	}
}

func sortedNodes(m map[uint32][]uint32) []uint32 {
	keys := make([]uint32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return cpuset.New(keys...).Sorted()
}

// Devices implements policy.DeviceProvider: nothing unless dra.enabled.
func (p *Policy) Devices(*abi.DevicesRequest) (*abi.DevicesResponse, error) {
	if !p.st.cfg.DRA {
		return &abi.DevicesResponse{}, nil
	}
	resp := &abi.DevicesResponse{}
	for _, d := range p.st.devices {
		ids := d.cpus.Sorted()
		smt := false
		for _, id := range ids {
			smt = smt || p.st.ix.cpus[id].threads > 1
		}
		resp.Devices = append(resp.Devices, &abi.Device{
			Name: d.name,
			Attributes: map[string]*abi.DeviceAttribute{
				attrNUMANode:   {Value: &abi.DeviceAttribute_IntValue{IntValue: int64(d.node)}},
				attrSocketID:   {Value: &abi.DeviceAttribute_IntValue{IntValue: int64(p.st.ix.cpus[ids[0]].pkg)}},
				attrSMTEnabled: {Value: &abi.DeviceAttribute_BoolValue{BoolValue: smt}},
			},
			Capacities:               map[string]*abi.DeviceCapacity{capacityCPU: cpuCapacity(len(ids))},
			AllowMultipleAllocations: true,
		})
	}
	return resp, nil
}

// Allocate implements policy.Allocator: each result on one of our devices
// takes consumed_capacity["dra.cpu/cpu"] (default 1) whole CPUs of its NUMA
// node, packed by core, out of the shared CPUs. A repeated Allocate of the
// same claim answers what the first one did.
func (p *Policy) Allocate(r *abi.AllocateRequest) (*abi.AllocateResponse, error) {
	s := p.st
	return claims.Allocate(r.GetClaim(), s.claims, func(c *claim) *abi.Claim { return c.spec }, (*claim).answer, s.allocateClaim, func() []*abi.ContainerUpdate { return s.updates("") })
}

// allocateClaim allocates a new claim, DRA being enabled.
func (s *state) allocateClaim(spec *abi.Claim) (*claim, error) {
	if !s.cfg.DRA {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, fieldDRAEnabled, "DRA is not enabled in the configuration")
	}
	want, err := s.parseResults(spec)
	if err != nil {
		return nil, err
	}
	return s.allocate(spec, want)
}

// parseResults checks a claim's results: our devices, whole CPUs.
func (s *state) parseResults(spec *abi.Claim) ([]int, error) {
	if len(spec.GetResults()) == 0 {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, fieldClaimResult, "the claim has no allocation result")
	}
	want := make([]int, len(spec.GetResults()))
	for i, res := range spec.GetResults() {
		field := fmt.Sprintf("%s[%d]", fieldClaimResult, i)
		if s.deviceByName[res.GetDevice()] == nil {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, field+".device",
				"%q is not a device of this node (%s)", res.GetDevice(), s.deviceNames())
		}
		want[i] = 1
		if q, ok := res.GetConsumedCapacity()[capacityCPU]; ok {
			milli, err := quantity.ParseMilliCPU(q)
			if err != nil || milli < 1000 || milli%1000 != 0 {
				return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, field+".consumed_capacity",
					"%s = %q: want a whole number of CPUs, at least 1", capacityCPU, q)
			}
			want[i] = int(milli / 1000)
		}
	}
	return want, nil
}

func (s *state) deviceNames() string {
	if len(s.devices) == 0 {
		return "none"
	}
	first, last := s.devices[0].name, s.devices[len(s.devices)-1].name
	if first == last {
		return first
	}
	return first + " … " + last
}

// Release implements policy.Releaser: the claim's CPUs go back to the shared
// CPUs. An unknown claim is already released. A claim that live containers
// still hold is refused (kubelet retries unpreparing; the containers' stop
// frees it).
func (p *Policy) Release(r *abi.ReleaseRequest) (*abi.ReleaseResponse, error) {
	s := p.st
	return claims.Release(r.GetClaim(), s.claims, s.release, func() []*abi.ContainerUpdate { return s.updates("") })
}

// release gives a claim's CPUs back unless live containers hold it.
func (s *state) release(c *claim) error {
	uid := c.uid
	if holders := s.holders(uid); len(holders) > 0 {
		return abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, fieldClaimUID,
			"claim %s is still used by containers %v", uid, holders)
	}
	s.dropClaim(c)
	return nil
}

// cpuCapacity is n whole CPUs, claimed one or more at a time: a range with
// step 1, or with a single CPU its only valid value (the API refuses a range
// whose min + step exceeds the capacity).
func cpuCapacity(n int) *abi.DeviceCapacity {
	policy := &abi.CapacityRequestPolicy{Default: "1", ValidRange: &abi.CapacityRequestPolicyRange{Min: "1", Step: "1"}}
	if n == 1 {
		policy = &abi.CapacityRequestPolicy{Default: "1", ValidValues: []string{"1"}}
	}
	return &abi.DeviceCapacity{Value: strconv.Itoa(n), RequestPolicy: policy}
}
