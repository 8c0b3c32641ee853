package balloons

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/claims"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// DRA: every instance of a type with publishDRADevices is a device named
// "<type>-<instance>" (the type's name as a DNS label). Allocating a claim
// binds the instance to it; containers holding the claim run in it.
const (
	attrType        = "balloonType"
	attrInstance    = "instance"
	attrNUMANodes   = "numaNodes"
	attrSocket      = "socket"
	capacityCPU     = "cpu"
	envPrefix       = "DRA_BALLOON_"
	defaultDriver   = Name + ".nri.io"
	conditionReady  = "Ready"
	reasonAllocated = "BalloonBound"
	fieldClaimUID   = "claim.uid"
	fieldResults    = "claim.results"
)

// claim is a prepared claim and the balloon it is bound to.
type claim struct {
	uid     string
	spec    *abi.Claim
	b       *balloon
	devices []*abi.PreparedDevice
}

// deviceName is the DRA device of instance inst of type name: a DNS label.
func deviceName(name string, inst int) string {
	suffix := "-" + strconv.Itoa(inst)
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	base := strings.Trim(b.String(), "-")
	if len(base) > 63-len(suffix) {
		base = strings.TrimRight(base[:63-len(suffix)], "-")
	}
	if base == "" {
		base = "balloon"
	}
	return base + suffix
}

// checkDevices refuses two types whose devices would have the same names.
func (s *state) checkDevices() error {
	seen := map[string]*btype{}
	for _, t := range s.types {
		if !t.PublishDRADevices {
			continue
		}
		for i := range t.MaxBalloons {
			n := deviceName(t.Name, i)
			if o := seen[n]; o != nil && o != t {
				return policyconfig.Errorf(t.field("name"), "its DRA device %s would have the name of one of %s's", n, o.Name)
			}
			seen[n] = t
		}
	}
	return nil
}

// wantsDRA tells whether a type publishes devices.
func (s *state) wantsDRA() bool {
	return slices.ContainsFunc(s.types, func(t *btype) bool { return t.PublishDRADevices })
}

// device finds the balloon a device name stands for.
func (s *state) device(name string) *balloon {
	for _, b := range s.balloons {
		if b.t.PublishDRADevices && deviceName(b.t.Name, b.inst) == name {
			return b
		}
	}
	return nil
}

// Devices implements policy.DeviceProvider: one device per instance of each
// type with publishDRADevices.
func (p *Policy) Devices(*abi.DevicesRequest) (*abi.DevicesResponse, error) {
	resp := &abi.DevicesResponse{}
	for _, b := range p.st.balloons {
		if !b.t.PublishDRADevices {
			continue
		}
		attrs := map[string]*abi.DeviceAttribute{
			attrType:     {Value: &abi.DeviceAttribute_StringValue{StringValue: b.t.Name}},
			attrInstance: {Value: &abi.DeviceAttribute_IntValue{IntValue: int64(b.inst)}},
		}
		if !b.cpus.IsEmpty() {
			attrs[attrNUMANodes] = &abi.DeviceAttribute{Value: &abi.DeviceAttribute_StringValue{StringValue: p.st.ix.nodesOf(b.cpus).String()}}
			attrs[attrSocket] = &abi.DeviceAttribute{Value: &abi.DeviceAttribute_IntValue{IntValue: int64(p.st.ix.PackagesOf(b.cpus).Sorted()[0])}}
		}
		resp.Devices = append(resp.Devices, &abi.Device{
			Name:       deviceName(b.t.Name, b.inst),
			Attributes: attrs,
			Capacities: map[string]*abi.DeviceCapacity{capacityCPU: {Value: strconv.Itoa(b.t.MaxCPUs)}},
		})
	}
	return resp, nil
}

// Allocate implements policy.Allocator: the claim's one device (instance)
// is bound to it. A repeated Allocate answers what the first one did.
func (p *Policy) Allocate(r *abi.AllocateRequest) (*abi.AllocateResponse, error) {
	return claims.Allocate(r.GetClaim(), p.st.claims, func(c *claim) *abi.Claim { return c.spec }, (*claim).answer, p.st.allocate, nil)
}

// allocate binds a new claim to the one balloon its results name.
func (s *state) allocate(spec *abi.Claim) (*claim, error) {
	b, err := s.resultBalloon(spec)
	if err != nil {
		return nil, err
	}
	return s.bind(spec, b), nil
}

// resultBalloon checks a claim's results: our devices, one instance, free.
func (s *state) resultBalloon(spec *abi.Claim) (*balloon, error) {
	results := spec.GetResults()
	if len(results) == 0 {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, fieldResults, "the claim has no allocation result")
	}
	var b *balloon
	for i, res := range results {
		f := fmt.Sprintf("%s[%d].device", fieldResults, i)
		d := s.device(res.GetDevice())
		switch {
		case d == nil:
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, f, "%q is not a balloon device of this node", res.GetDevice())
		case b != nil && d != b:
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, f, "a claim binds one balloon; it names %s and %s", deviceName(b.t.Name, b.inst), res.GetDevice())
		case d.claim != "":
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, f, "%s is bound to claim %s", res.GetDevice(), d.claim)
		}
		b = d
	}
	return b, nil
}

// statusData is the JSON of a prepared device's status.
type statusData struct {
	Balloon   string `json:"balloon"`
	CPUSet    string `json:"cpuset"`
	NUMANodes string `json:"numaNodes"`
}

// bind binds claim spec to b and records the answer.
func (s *state) bind(spec *abi.Claim, b *balloon) *claim {
	c := &claim{uid: strings.Clone(spec.GetUid()), spec: spec.CloneVT(), b: b}
	b.claim = c.uid
	dev := deviceName(b.t.Name, b.inst)
	data := statusData{Balloon: b.name(), CPUSet: b.cpus.String(), NUMANodes: s.ix.nodesOf(b.cpus).String()}.appendJSON(nil)
	for _, res := range spec.GetResults() {
		c.devices = append(c.devices, &abi.PreparedDevice{
			Request: res.GetRequest(), Pool: res.GetPool(), Device: res.GetDevice(), ShareId: res.GetShareId(),
			ContainerEdits: &abi.CDIContainerEdits{Env: []string{claimEnvName(c.uid) + "=" + dev}},
			Status: &abi.DeviceStatus{Conditions: []*abi.Condition{{Type: conditionReady, Status: "True", Reason: reasonAllocated,
				Message: fmt.Sprintf("balloon %s, %d CPUs now, at most %d", b.name(), b.cpus.Size(), b.t.MaxCPUs)}}, Data: data},
		})
	}
	s.claims[c.uid] = c
	return c
}

// claimEnvName is the environment variable naming a claim's balloon:
// DRA_BALLOON_<uid>, the uid as it is ('-' included), named as topology-aware
// and nri-plugins name their DRA_CPUSET_<uid> (claims.EnvName).
func claimEnvName(uid string) string { return claims.EnvName(envPrefix, uid) }

// answer is the claim's prepared devices, a copy.
func (c *claim) answer() []*abi.PreparedDevice {
	out := make([]*abi.PreparedDevice, len(c.devices))
	for i, d := range c.devices {
		out[i] = d.CloneVT()
	}
	return out
}

// Release implements policy.Releaser: the instance is free for another
// claim. An unknown claim is released already; a claim live containers
// still hold is refused (kubelet retries; their removal frees it).
func (p *Policy) Release(r *abi.ReleaseRequest) (*abi.ReleaseResponse, error) {
	s := p.st
	return claims.Release(r.GetClaim(), s.claims, s.release, func() []*abi.ContainerUpdate { return s.updates("") })
}

// release frees a claim's instance unless live containers run in it.
func (s *state) release(c *claim) error {
	uid := c.uid
	if n := len(c.b.members); n > 0 {
		return abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, fieldClaimUID, "claim %s is still used by %d containers: %s", uid, n, strings.Join(c.b.memberIDs(), ", "))
	}
	c.b.claim = ""
	delete(s.claims, uid)
	return nil
}

// claimsOf finds the claims a container holds (claims.Finder): by the CDI
// devices the host names for claims, or only when the runtime reports none,
// by the claims' environment variables, whose value is the claim's device.
// A CDI device of ours naming an unknown claim is an error.
func (s *state) claimsOf(spec *abi.Container) ([]*claim, error) {
	f := claims.Finder[*claim]{Driver: s.driver, EnvPrefix: envPrefix, EnvName: claimEnvName, EnvValue: func(c *claim) string { return deviceName(c.b.t.Name, c.b.inst) }}
	return f.Of(spec, s.claims)
}

// claimBalloon is the balloon of a container's claims: one balloon.
func (s *state) claimBalloon(claims []*claim) (*balloon, error) {
	for _, c := range claims[1:] {
		if c.b != claims[0].b {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "container.cdi_devices",
				"the container holds claims %s and %s of two balloons; a container runs in one", claims[0].uid, c.uid)
		}
	}
	return claims[0].b, nil
}
