package topologyaware_test

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

func (h *harness) tryUpdate(id string, milli int64) ([]*abi.ContainerUpdate, error) {
	c := h.Containers[id]
	res := c.Resources.CloneVT()
	res.CpuRequestMilli = milli
	resp, err := h.Client.UpdateContainer(context.Background(), &abi.UpdateContainerRequest{Pod: h.Pods[c.PodSandboxId], Container: c, Resources: res})
	if err != nil {
		return nil, err
	}
	c.Resources = res
	h.Apply(resp.Updates)
	return resp.Updates, nil
}

// TestUpdateContainer resizes one Guaranteed container through every kind
// of grant on the desktop (cpu0 reserved, 1-15 shared) and checks its own
// update, its neighbour's and the invariants at each step.
func TestUpdateContainer(t *testing.T) {
	h := newHarness(t, "Desktop1Socket", "")
	h.Create(bestEffort("be"))
	if got := h.Create(guaranteed("g", 1000)).Adjustment.CpusetCpus; got != "8" {
		t.Fatalf("g got %q", got)
	}
	steps := []struct {
		milli int64
		want  []*abi.ContainerUpdate
	}{
		// 1 → 2 CPUs: keeps cpu8 (the reserved cpu0's sibling), adds cpu1.
		{2000, []*abi.ContainerUpdate{{ContainerId: "be", CpusetCpus: "2-7,9-15"}, {ContainerId: "g", CpusetCpus: "1,8"}}},
		// 2 → 1.5: mixed, keeps cpu8 and shares the rest.
		{1500, []*abi.ContainerUpdate{{ContainerId: "be", CpusetCpus: "1-7,9-15"}, {ContainerId: "g", CpusetCpus: "1-15"}}},
		// 1.5 → 1: exclusive, the same CPU.
		{1000, []*abi.ContainerUpdate{{ContainerId: "g", CpusetCpus: "8"}}},
		// 1 → 0.5: shared.
		{500, []*abi.ContainerUpdate{{ContainerId: "be", CpusetCpus: "1-15"}, {ContainerId: "g", CpusetCpus: "1-15"}}},
		{700, nil},
		// 0.7 → 3: exclusive again, whole cores first.
		{3000, []*abi.ContainerUpdate{{ContainerId: "be", CpusetCpus: "2-7,10-15"}, {ContainerId: "g", CpusetCpus: "1,8-9"}}},
	}
	for _, st := range steps {
		got, err := h.tryUpdate("g", st.milli)
		if err != nil {
			t.Fatalf("resize to %dm: %v", st.milli, err)
		}
		if !equalUpdates(got, st.want) {
			t.Errorf("resize to %dm: updates %v, want %v", st.milli, got, st.want)
		}
		h.check()
	}
	before := h.dumpRaw()
	_, err := h.tryUpdate("g", 64000)
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "resources.cpu_request_milli")
	if after := h.dumpRaw(); string(after) != string(before) {
		t.Errorf("a refused resize changed the state:\n%s\n%s", before, after)
	}
	resp, err := h.Client.UpdateContainer(context.Background(), &abi.UpdateContainerRequest{Container: &abi.Container{Id: "nobody"}, Resources: &abi.Resources{CpuRequestMilli: 1}})
	if err != nil || len(resp.Updates) != 0 {
		t.Errorf("resizing an unknown container: %v, %v", resp, err)
	}
}

// TestUpdateScenario resizes every container of the mixed scenario on every
// machine, up and down, with the invariants after each step, then restores
// the result into a new instance.
func TestUpdateScenario(t *testing.T) {
	for _, m := range machines {
		t.Run(m, func(t *testing.T) { updateScenario(t, tryHarness, m) })
	}
}

// updateScenario resizes every container of the mixed scenario, and restarts.
func updateScenario(t *testing.T, open opener, machine string) {
	h := mustOpen(t, open, machine, "reservedPoolNamespaces: [monitoring]\n")
	mixed(t, h)
	for _, factor := range []int64{3, 1, 0} {
		for _, id := range h.Order {
			milli := h.Containers[id].Resources.CpuRequestMilli
			if _, err := h.tryUpdate(id, milli*factor/2+500); err != nil {
				policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "resources.cpu_request_milli")
			}
			h.check("monitoring")
		}
	}
	h2, err := open(t, machine, h.Config, h.RestoreState())
	if err != nil {
		t.Fatal(err)
	}
	adoptView(h, h2)
	if d1, d2 := h.dumpRaw(), h2.dumpRaw(); string(d1) != string(d2) {
		t.Errorf("restored state differs:\n%s\n---\n%s", d1, d2)
	}
}

// TestMixedRestore: mixed grants come back with the same exclusive part,
// whether a shared container, another mixed grant or nothing reveals it.
func TestMixedRestore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		specs []spec
	}{
		{"alone", []spec{guaranteed("m", 2500)}},
		{"pair", []spec{guaranteed("m1", 2500), guaranteed("m2", 1200)}},
		{"with shared", []spec{guaranteed("m1", 1200), burstable("b", 300), guaranteed("x", 2000), guaranteed("m2", 3700)}},
	} {
		for _, m := range machines {
			t.Run(tc.name+"/"+m, func(t *testing.T) {
				h := newHarness(t, m, "")
				for _, s := range tc.specs {
					h.Create(s)
					h.check()
				}
				h2, err := tryHarness(t, m, "", h.RestoreState())
				if err != nil {
					t.Fatal(err)
				}
				adoptView(h, h2)
				if d1, d2 := h.dumpRaw(), h2.dumpRaw(); string(d1) != string(d2) {
					t.Errorf("restored state differs:\n%s\n---\n%s", d1, d2)
				}
			})
		}
	}
}
