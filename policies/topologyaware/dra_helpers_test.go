package topologyaware_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/native"
)

const draOn = "dra:\n  enabled: true\n"

// cpuClaim is a claim with one result per "device:cpus" ("cpudevnuma000:2";
// without ":cpus" no capacity is named).
func cpuClaim(uid string, results ...string) *abi.Claim {
	c := &abi.Claim{Uid: uid, Namespace: "default", Name: "cpus-" + uid}
	for i, r := range results {
		dev, n, named := strings.Cut(r, ":")
		res := &abi.DeviceAllocation{Request: "req" + string(rune('a'+i)), Pool: "n1", Device: dev}
		if named {
			res.ConsumedCapacity = map[string]string{"dra.cpu/cpu": n}
		}
		c.Results = append(c.Results, res)
	}
	return c
}

// cdiOf is the CDI device of claim uid under the default driver name.
func cdiOf(uid string) string { return abi.CDIDeviceName("topology-aware.nri.io", uid, 0) }

// holding makes a spec hold claims through their CDI devices.
func (s spec) holding(uids ...string) spec {
	for _, uid := range uids {
		s.cdi = append(s.cdi, cdiOf(uid))
	}
	return s
}

func (h *harness) tryAllocate(c *abi.Claim) (*abi.AllocateResponse, error) {
	resp, err := h.client.Allocate(context.Background(), &abi.AllocateRequest{Claim: c})
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(h.claims, func(p *abi.PreparedClaim) bool { return p.Claim.Uid == c.Uid }) {
		h.claims = append(h.claims, &abi.PreparedClaim{Claim: c, Allocation: resp})
	}
	h.apply(resp.Updates)
	return resp, nil
}

func (h *harness) allocate(c *abi.Claim) *abi.AllocateResponse {
	h.tb.Helper()
	resp, err := h.tryAllocate(c)
	if err != nil {
		h.tb.Fatalf("Allocate(%s): %v", c.Uid, err)
	}
	return resp
}

func (h *harness) tryRelease(uid string) ([]*abi.ContainerUpdate, error) {
	i := slices.IndexFunc(h.claims, func(p *abi.PreparedClaim) bool { return p.Claim.Uid == uid })
	c := &abi.Claim{Uid: uid}
	if i >= 0 {
		c = h.claims[i].Claim
	}
	resp, err := h.client.Release(context.Background(), &abi.ReleaseRequest{Claim: c})
	if err != nil {
		return nil, err
	}
	if i >= 0 {
		h.claims = slices.Delete(h.claims, i, i+1)
	}
	h.apply(resp.Updates)
	return resp.Updates, nil
}

func (h *harness) release(uid string) []*abi.ContainerUpdate {
	h.tb.Helper()
	u, err := h.tryRelease(uid)
	if err != nil {
		h.tb.Fatalf("Release(%s): %v", uid, err)
	}
	return u
}

// initResponse runs Init on a fresh policy and returns its answer.
func initResponse(t *testing.T, machine, config string) *abi.InitResponse {
	t.Helper()
	r, err := native.New(topologyaware.New())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := abi.NewClient(r).Init(context.Background(), &abi.InitRequest{Config: []byte(config), Topology: machineTopology(t, machine)})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
