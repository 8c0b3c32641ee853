package topologyaware_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestDevices: one device per NUMA node with grantable CPUs, whose
// capacities add up to the available CPUs less the reserved (isolated ones
// included, as nri-plugins counts isolated ∪ sharable − reserved).
func TestDevices(t *testing.T) {
	for _, m := range machines {
		t.Run(m, func(t *testing.T) {
			if !initResponse(t, m, draOn).WantsDra || initResponse(t, m, "").WantsDra {
				t.Errorf("wants_dra does not follow dra.enabled")
			}
			h := newHarness(t, m, draOn)
			resp, err := h.Client.Devices(context.Background(), &abi.DevicesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			d := h.dump()
			want := policytest.MustSet(t, d.Available).Difference(policytest.MustSet(t, d.Reserved)).Size()
			total := 0
			for i, dev := range resp.Devices {
				node := dev.Attributes["resource.kubernetes.io/numaNode"].GetIntValue()
				if dev.Name != fmt.Sprintf("cpudevnuma%03d", node) || !dev.AllowMultipleAllocations {
					t.Errorf("device %d: %v", i, dev)
				}
				if i > 0 && resp.Devices[i-1].Name >= dev.Name {
					t.Errorf("devices not in node order")
				}
				c := dev.Capacities["dra.cpu/cpu"]
				var n int
				if _, err := fmt.Sscan(c.GetValue(), &n); err != nil || n <= 0 {
					t.Errorf("%s: capacity %v", dev.Name, c)
				}
				total += n
				if p := c.GetRequestPolicy(); n > 1 && (p.GetDefault() != "1" || p.GetValidRange().GetMin() != "1" || p.GetValidRange().GetStep() != "1") {
					t.Errorf("%s: request policy %v", dev.Name, p)
				}
			}
			if total != want {
				t.Errorf("devices offer %d CPUs, want %d", total, want)
			}
			if err := validate.Devices(resp); err != nil {
				t.Errorf("the API server would refuse the devices: %v", err)
			}
		})
	}
	h := newHarness(t, "Desktop1Socket", draOn)
	resp, _ := h.Client.Devices(context.Background(), &abi.DevicesRequest{})
	want := &abi.Device{Name: "cpudevnuma000", AllowMultipleAllocations: true,
		Attributes: map[string]*abi.DeviceAttribute{
			"resource.kubernetes.io/numaNode": {Value: &abi.DeviceAttribute_IntValue{IntValue: 0}},
			"dra.cpu/socketID":                {Value: &abi.DeviceAttribute_IntValue{IntValue: 0}},
			"dra.cpu/smtEnabled":              {Value: &abi.DeviceAttribute_BoolValue{BoolValue: true}},
		},
		Capacities: map[string]*abi.DeviceCapacity{"dra.cpu/cpu": {Value: "15",
			RequestPolicy: &abi.CapacityRequestPolicy{Default: "1", ValidRange: &abi.CapacityRequestPolicyRange{Min: "1", Step: "1"}}}},
	}
	if len(resp.Devices) != 1 || !resp.Devices[0].EqualVT(want) {
		t.Errorf("Desktop1Socket devices %v, want %v", resp.Devices, want)
	}
}

// TestOneCPUDevice: a node with a single grantable CPU offers it as the one
// valid amount (a range with a step would exceed the capacity, which the API
// server refuses).
func TestOneCPUDevice(t *testing.T) {
	h := newHarness(t, "Desktop1Socket", draOn+"availableResources:\n  cpu: cpuset:0-1\nreservedResources:\n  cpu: cpuset:0\n")
	resp, err := h.Client.Devices(context.Background(), &abi.DevicesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Devices) != 1 {
		t.Fatalf("devices = %v, want one", resp.Devices)
	}
	c := resp.Devices[0].Capacities["dra.cpu/cpu"]
	if c.GetValue() != "1" || len(c.GetRequestPolicy().GetValidValues()) != 1 || c.GetRequestPolicy().GetValidRange() != nil {
		t.Errorf("capacity = %v, want 1 with the valid values [1]", c)
	}
	if err := validate.Devices(resp); err != nil {
		t.Errorf("the API server would refuse the device: %v", err)
	}
}

// TestDRAOff: without dra.enabled nothing is offered and Allocate refuses.
func TestDRAOff(t *testing.T) {
	h := newHarness(t, "Desktop1Socket", "")
	resp, err := h.Client.Devices(context.Background(), &abi.DevicesRequest{})
	if err != nil || len(resp.Devices) != 0 {
		t.Errorf("Devices = %v, %v; want none", resp, err)
	}
	_, err = h.TryAllocate(cpuClaim("u1", "cpudevnuma000"))
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "config.dra.enabled")
}

// TestAllocate walks one claim through its life on the desktop: packed
// CPUs out of the shared pool (with updates), the answer (its env named
// after the uid as it is, '-' kept, as nri-plugins names it), holders pinned
// to it — one that requests CPU of its own also gets its pool's shared CPUs
// and follows them, as nri-plugins gives them — idempotence, refusal while
// held, release.
func TestAllocate(t *testing.T) {
	h := newHarness(t, "Desktop1Socket", draOn)
	h.Create(bestEffort("be"))
	h.Create(burstable("bu", 500))
	uid := "1111-2222"
	resp := h.Allocate(cpuClaim(uid, "cpudevnuma000:2"))
	want := &abi.PreparedDevice{Request: "reqa", Pool: "n1", Device: "cpudevnuma000",
		ContainerEdits: &abi.CDIContainerEdits{Env: []string{"DRA_CPUSET_1111-2222=1,9"}},
		Status: &abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Ready", Status: "True", Reason: "CPUsAllocated",
			Message: "2 CPUs of NUMA node 0"}}, Data: []byte(`{"cpuset":"1,9","numaNodes":[0]}`)}}
	if len(resp.Devices) != 1 || !resp.Devices[0].EqualVT(want) {
		t.Fatalf("Allocate answered %v, want %v", resp.Devices, want)
	}
	wantUpdates := []*abi.ContainerUpdate{{ContainerId: "be", CpusetCpus: "2-8,10-15"}, {ContainerId: "bu", CpusetCpus: "2-8,10-15"}}
	if !equalUpdates(resp.Updates, wantUpdates) {
		t.Errorf("updates %v, want %v", resp.Updates, wantUpdates)
	}
	h.check()
	again := h.Allocate(cpuClaim(uid, "cpudevnuma000:2"))
	if !again.EqualVT(&abi.AllocateResponse{Devices: resp.Devices}) {
		t.Errorf("a repeated Allocate answered %v", again)
	}
	_, err := h.TryAllocate(cpuClaim(uid, "cpudevnuma000:3"))
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "claim.results")

	adj := h.Create(burstable("holder", 100).Holding(driverName, uid)).Adjustment
	if adj.CpusetCpus != "1-15" || adj.CpusetMems != "0" {
		t.Errorf("holder with 100m of its own got %q/%q, want 1-15/0: the claim's 1,9 and the shared 2-8,10-15", adj.CpusetCpus, adj.CpusetMems)
	}
	if adj := h.Create(bestEffort("only").Holding(driverName, uid)).Adjustment; adj.CpusetCpus != "1,9" {
		t.Errorf("BestEffort holder got %q, want the claim's 1,9 only", adj.CpusetCpus)
	}
	g := h.Create(guaranteed("g", 2000))
	if !slices.ContainsFunc(g.Updates, func(u *abi.ContainerUpdate) bool {
		return u.ContainerId == "holder" && u.CpusetCpus == "1,3-9,11-15"
	}) {
		t.Errorf("an exclusive grant did not shrink the holder's shared CPUs: %v", g.Updates)
	}
	h.check()
	_, err = h.TryRelease(uid)
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "claim.uid")
	h.Remove("holder")
	h.Remove("only")
	got := h.Release(uid)
	wantUpdates = []*abi.ContainerUpdate{{ContainerId: "be", CpusetCpus: "1,3-9,11-15"}, {ContainerId: "bu", CpusetCpus: "1,3-9,11-15"}}
	if !equalUpdates(got, wantUpdates) {
		t.Errorf("release updates %v, want %v", got, wantUpdates)
	}
	h.check()
	if len(h.dump().Claims) != 0 || len(h.Release(uid)) != 0 {
		t.Errorf("a released claim lingers")
	}
}

// TestAllocateNodes: a claim's results take CPUs of their own nodes; a
// container holding two claims gets both, and both nodes' memory.
func TestAllocateNodes(t *testing.T) {
	h := newHarness(t, "Server2Socket4NodesInterleaved", draOn)
	h.Create(bestEffort("be"))
	resp := h.Allocate(cpuClaim("a", "cpudevnuma001:4", "cpudevnuma002"))
	if env := resp.Devices[0].ContainerEdits.Env[0]; env != "DRA_CPUSET_a=1,24,26,72,74" {
		t.Errorf("env %q", env)
	}
	h.Allocate(cpuClaim("b", "cpudevnuma003:2"))
	adj := h.Create(bestEffort("both").Holding(driverName, "a", "b")).Adjustment
	if adj.CpusetCpus != "1,24-26,72-74" || adj.CpusetMems != "1-3" {
		t.Errorf("holder of a and b got %q/%q", adj.CpusetCpus, adj.CpusetMems)
	}
	h.check()
	for _, id := range policytest.IDs(6, "g") {
		h.Create(guaranteed(id, 4000))
		h.check()
	}
}

// TestClaimEnvFallback: a container without CDI devices holds a claim by its
// environment variable, only with the claim's exact cpuset as value.
func TestClaimEnvFallback(t *testing.T) {
	h := newHarness(t, "Desktop1Socket", draOn)
	h.Allocate(cpuClaim("u-1", "cpudevnuma000:2"))
	ok := bestEffort("ok")
	ok.Env = []*abi.KeyValue{{Key: "DRA_CPUSET_u-1", Value: "1,9"}}
	forged := bestEffort("forged")
	forged.Env = []*abi.KeyValue{{Key: "DRA_CPUSET_u-1", Value: "1-15"}}
	if got := h.Create(ok).Adjustment.CpusetCpus; got != "1,9" {
		t.Errorf("env holder got %q", got)
	}
	if got := h.Create(forged).Adjustment.CpusetCpus; got != "2-8,10-15" {
		t.Errorf("forged env got %q", got)
	}
	h.check()
}

// TestDRABadInput: every refusal names its field and changes nothing.
func TestDRABadInput(t *testing.T) {
	tests := []struct {
		name  string
		claim *abi.Claim
		code  abi.ErrorCode
		field string
	}{
		{"no uid", cpuClaim("", "cpudevnuma000"), abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "claim.uid"},
		{"no results", cpuClaim("u"), abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "claim.results"},
		{"unknown device", cpuClaim("u", "cpudevnuma000", "gpu0"), abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "claim.results[1].device"},
		{"fraction", cpuClaim("u", "cpudevnuma000:1.5"), abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "claim.results[0].consumed_capacity"},
		{"zero", cpuClaim("u", "cpudevnuma000:0"), abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "claim.results[0].consumed_capacity"},
		{"junk", cpuClaim("u", "cpudevnuma000:lots"), abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "claim.results[0].consumed_capacity"},
		{"too many", cpuClaim("u", "cpudevnuma000:16"), abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "claim.results[0].consumed_capacity"},
		{"second too many", cpuClaim("u", "cpudevnuma000:4", "cpudevnuma000:1"), abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "claim.results[1].consumed_capacity"},
		{"shared need them", cpuClaim("u", "cpudevnuma000:5"), abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "claim.results[0].consumed_capacity"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, "Desktop1Socket", draOn)
			h.Create(burstable("big", 11000))
			before := h.dumpRaw()
			_, err := h.TryAllocate(tc.claim)
			policytest.WantError(t, err, tc.code, tc.field)
			if after := h.dumpRaw(); string(after) != string(before) {
				t.Errorf("a refused Allocate changed the state:\n%s\n%s", before, after)
			}
			h.check()
		})
	}
	h := newHarness(t, "Desktop1Socket", draOn)
	_, err := h.TryCreate(bestEffort("x").Holding(driverName, "nope"))
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "container.cdi_devices[0]")
}

// TestClaimSynchronize: a container the policy did not see created, holding
// a claim, is pinned to it by Synchronize.
func TestClaimSynchronize(t *testing.T) {
	h := newHarness(t, "Desktop1Socket", draOn)
	h.Allocate(cpuClaim("u", "cpudevnuma000:2"))
	req := bestEffort("late").Holding(driverName, "u").Request()
	req.Container.State = abi.ContainerState_CONTAINER_STATE_RUNNING
	resp, err := h.Client.Synchronize(context.Background(), &abi.SynchronizeRequest{Pods: []*abi.PodSandbox{req.Pod}, Containers: []*abi.Container{req.Container}})
	want := []*abi.ContainerUpdate{{ContainerId: "late", CpusetCpus: "1,9", CpusetMems: "0"}}
	if err != nil || !equalUpdates(resp.Updates, want) {
		t.Errorf("Synchronize: %v, %v; want %v", resp, err, want)
	}
}

// TestAllocateIsolated: a node's device offers its isolated CPUs too, and a
// claim for all of it takes them, shared CPUs first.
func TestAllocateIsolated(t *testing.T) {
	h := newHarness(t, "PMEM112CPUIsolated", draOn)
	resp, err := h.Client.Devices(context.Background(), &abi.DevicesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	dev := resp.Devices[0]
	capacity := dev.Capacities["dra.cpu/cpu"].GetValue()
	h.Allocate(cpuClaim("all", dev.Name+":"+capacity))
	d := h.dump()
	if iso := policytest.MustSet(t, d.Isolated); iso.IsEmpty() || !iso.IsSubsetOf(policytest.MustSet(t, d.Claims[0].CPUs)) {
		t.Errorf("a claim of all %s CPUs of %s has %s, not the isolated %s", capacity, dev.Name, d.Claims[0].CPUs, iso)
	}
	h.Create(bestEffort("be"))
	h.check()
}
