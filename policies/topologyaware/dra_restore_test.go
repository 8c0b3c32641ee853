package topologyaware_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestDRARestore: a restarted instance takes its claims back exactly: the
// same state, the same answer to a repeated Allocate, the same decisions.
func TestDRARestore(t *testing.T) {
	for _, m := range machines {
		t.Run(m, func(t *testing.T) { draRestoreScenario(t, tryHarness, m) })
	}
}

// draRestoreScenario restarts an instance that ran draMix.
func draRestoreScenario(t *testing.T, open opener, machine string) {
	h1 := mustOpen(t, open, machine, draOn)
	draMix(t, h1)
	h2, err := open(t, machine, draOn, h1.RestoreState())
	if err != nil {
		t.Fatalf("Init with restore: %v", err)
	}
	adoptView(h1, h2)
	if d1, d2 := h1.dumpRaw(), h2.dumpRaw(); string(d1) != string(d2) {
		t.Fatalf("restored state differs:\n%s\n---\n%s", d1, d2)
	}
	h2.check()
	for _, c := range h1.Claims {
		if r := h2.Allocate(c.Claim); !equalDevices(r.Devices, c.Allocation.Devices) {
			t.Errorf("claim %s: restored answer %v, first %v", c.Claim.Uid, r.Devices, c.Allocation.Devices)
		}
	}
	r1, err1 := h1.TryAllocate(cpuClaim("next", devOf(h1, 1)+":1"))
	r2, err2 := h2.TryAllocate(cpuClaim("next", devOf(h2, 1)+":1"))
	if !r1.EqualVT(r2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
		t.Errorf("next claim: %v, %v vs %v, %v", r1, err1, r2, err2)
	}
	h1.Remove("hold-0")
	h2.Remove("hold-0")
	if u1, u2 := h1.Release("c-0"), h2.Release("c-0"); !equalUpdates(u1, u2) {
		t.Errorf("release: %v vs %v", u1, u2)
	}
	h2.check()
}

// draMix is a mix of containers and claims on every device.
func draMix(t testing.TB, h *harness) {
	mixed(t, h)
	for i := range 3 {
		uid := fmt.Sprintf("c-%d", i)
		h.Allocate(cpuClaim(uid, devOf(h, i)+":"+fmt.Sprint(i+1)))
		h.Create(burstable(fmt.Sprintf("hold-%d", i), 100).Holding(driverName, uid))
		if _, err := h.TryCreate(guaranteed(fmt.Sprintf("gx-%d", i), 1000)); err != nil {
			policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources.cpu_request_milli")
		}
		h.check("monitoring")
	}
}

// devOf is the i-th device of h's node, round robin.
func devOf(h *harness, i int) string {
	resp, err := h.Client.Devices(context.Background(), &abi.DevicesRequest{})
	if err != nil || len(resp.Devices) == 0 {
		h.TB.Fatalf("Devices: %v, %v", resp, err)
	}
	return resp.Devices[i%len(resp.Devices)].Name
}

func equalDevices(a, b []*abi.PreparedDevice) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].EqualVT(b[i]) {
			return false
		}
	}
	return true
}

// TestDRAReconfigure: claims carry over; a configuration that would take
// their CPUs is refused, naming the field.
func TestDRAReconfigure(t *testing.T) {
	h := newHarness(t, "Desktop1Socket", draOn)
	h.Allocate(cpuClaim("u", "cpudevnuma000:2"))
	h.Create(bestEffort("hold").Holding(driverName, "u"))
	ctx := context.Background()
	for cfg, field := range map[string]string{
		draOn + "reservedResources: {cpu: cpuset:1}\n":    "config.reservedResources.cpu",
		draOn + "availableResources: {cpu: cpuset:0-8}\n": "config.availableResources.cpu",
	} {
		_, err := h.Client.Reconfigure(ctx, &abi.ReconfigureRequest{Config: []byte(cfg)})
		policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, field)
	}
	resp, err := h.Client.Reconfigure(ctx, &abi.ReconfigureRequest{Config: []byte("reservedResources: {cpu: 2}\n")})
	if err != nil || resp.WantsDra {
		t.Fatalf("Reconfigure: %v, %v", resp, err)
	}
	h.Apply(resp.Updates)
	h.Config = ""
	h.check()
	if d := h.dump(); len(d.Claims) != 1 || !policytest.MustSet(t, d.Claims[0].CPUs).Equal(cpuset.New(1, 9)) {
		t.Errorf("claims after Reconfigure: %v", d.Claims)
	}
}

// TestDRARestoreForeign: a journaled claim whose CPUs clash with an earlier
// one, or whose answer cannot be read, is kept unaccounted, and so is its
// holder; the valid one is taken back.
func TestDRARestoreForeign(t *testing.T) {
	prepared := func(uid, data string) *abi.PreparedClaim {
		c := cpuClaim(uid, "cpudevnuma000:2")
		return &abi.PreparedClaim{Claim: c, Allocation: &abi.AllocateResponse{Devices: []*abi.PreparedDevice{{
			Request: "reqa", Pool: "n1", Device: "cpudevnuma000", Status: &abi.DeviceStatus{Data: []byte(data)}}}}}
	}
	pod := &abi.PodSandbox{Id: "p", Namespace: "default", QosClass: abi.QOSClass_QOS_CLASS_BEST_EFFORT}
	holder := &abi.Container{Id: "h", PodSandboxId: "p", Name: "h", CdiDevices: []string{cdiOf("b")},
		Assignment: &abi.ContainerAdjustment{CpusetCpus: "9-10", CpusetMems: "0"}}
	rs := &abi.RestoreState{Pods: []*abi.PodSandbox{pod}, Containers: []*abi.Container{holder}, Claims: []*abi.PreparedClaim{
		prepared("c", "junk"), prepared("b", `{"cpuset":"9-10","numaNodes":[0]}`), prepared("a", `{"cpuset":"1,9","numaNodes":[0]}`)}}
	h, err := tryHarness(t, "Desktop1Socket", draOn, rs)
	if err != nil {
		t.Fatal(err)
	}
	d := h.dump()
	got := fmt.Sprint(d.Claims)
	if want := "[{a 1,9 [cpudevnuma000:1,9] false} {b 9-10 [cpudevnuma000:9-10] true} {c  [cpudevnuma000:] true}]"; got != want {
		t.Errorf("claims %s, want %s", got, want)
	}
	if c := d.Containers[0]; c.Kind != "fixed" || c.CPUs != "9-10" {
		t.Errorf("holder of a foreign claim adopted as %+v", c)
	}
	if adj := h.Create(bestEffort("be")).Adjustment; adj.CpusetCpus != "2-8,10-15" {
		t.Errorf("shared CPUs %q, want all but the reserved and claim a's", adj.CpusetCpus)
	}
}

// TestDRARestoreSwap: in a live swap (InitRequest.swap) a journaled claim
// whose CPUs the new configuration no longer grants refuses the instance,
// naming the field that takes them; a restart starts (a claim outside the
// available CPUs kept unaccounted; reserved CPUs moved off the claim's, so
// nobody else is given them); a claim the configuration still grants is
// taken back in a swap as after a restart.
func TestDRARestoreSwap(t *testing.T) {
	h1 := newHarness(t, "Desktop1Socket", draOn)
	h1.Allocate(cpuClaim("u", "cpudevnuma000:2"))
	h1.Create(bestEffort("hold").Holding(driverName, "u"))
	cpus := h1.dump().Claims[0].CPUs
	var h2 *harness
	open := func(config string, swap bool) error {
		rt, err := policytest.Open(t, builds.Native(t), &abi.InitRequest{Config: []byte(config), NodeName: "n1",
			Topology: policytest.Machine(t, "Desktop1Socket"), Restore: h1.RestoreState(), Swap: swap})
		h2 = &harness{rt}
		return err
	}
	taking := map[string]string{
		draOn + "reservedResources: {cpu: \"cpuset:" + cpus + "\"}\n": "config.reservedResources.cpu",
		draOn + "availableResources: {cpu: cpuset:12-15}\n":           "config.availableResources.cpu",
	}
	for cfg, field := range taking {
		policytest.WantError(t, open(cfg, true), abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, field)
		if err := open(cfg, false); err != nil {
			t.Errorf("restart with %q: %v, want the claim kept unaccounted", cfg, err)
		}
	}
	// After a restart the reserved CPUs move off the claim's, which stays
	// accounted: nobody else is given them.
	if err := open(draOn+"reservedResources: {cpu: \"cpuset:"+cpus+"\"}\n", false); err != nil {
		t.Fatal(err)
	}
	claimed := policytest.MustSet(t, cpus)
	if d := h2.dump(); len(d.Claims) != 1 || d.Claims[0].Foreign || policytest.MustSet(t, d.Reserved).Intersects(claimed) || policytest.MustSet(t, d.Reserved).Size() != claimed.Size() {
		t.Errorf("after a restart reserving claim u's CPUs %s: reserved %s, claims %v", cpus, d.Reserved, d.Claims)
	}
	for _, s := range []spec{system("sys", 100), bestEffort("be"), guaranteed("g", 1000)} {
		if got := h2.Create(s).Adjustment.CpusetCpus; policytest.MustSet(t, got).Intersects(claimed) {
			t.Errorf("%s placed on %s, over claim u's CPUs %s", s.ID, got, cpus)
		}
	}
	if err := open(draOn+"reservedResources: {cpu: 2}\n", true); err != nil {
		t.Errorf("swap to a configuration that keeps claim u's CPUs %s: %v", cpus, err)
	}
}
