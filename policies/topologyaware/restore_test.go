package topologyaware_test

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func mustOpen(t testing.TB, open opener, machine, config string) *harness {
	t.Helper()
	h, err := open(t, machine, config, nil)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	return h
}

// adoptView makes h2's runtime view a copy of h1's, as after a host restart.
func adoptView(h1, h2 *harness) {
	for id, p := range h1.Pods {
		h2.Pods[id] = p.CloneVT()
	}
	for id, c := range h1.Containers {
		h2.Containers[id] = c.CloneVT()
	}
	h2.Order = append(h2.Order, h1.Order...)
	h2.Claims = append(h2.Claims, h1.Claims...)
}

// TestRestore: a new instance Init'ed with the journal of a running one
// re-adopts every placement exactly (its state dumps byte-identical), moves
// nobody, and its next placements match the old instance's and collide
// with nothing.
func TestRestore(t *testing.T) {
	for _, m := range machines {
		for _, config := range []string{"", "reservedPoolNamespaces: [monitoring]\nreservedResources:\n  cpu: cpuset:4-5\n"} {
			t.Run(m+"/"+config, func(t *testing.T) { restoreScenario(t, tryHarness, m, config) })
		}
	}
}

// restoreScenario restarts an instance that ran the mixed scenario.
func restoreScenario(t *testing.T, open opener, machine, config string) {
	h1 := mustOpen(t, open, machine, config)
	mixed(t, h1)
	h1.Create(guaranteed("g-after", 2000))
	h1.Create(burstable("bu-after", 700))

	h2, err := open(t, machine, config, h1.RestoreState())
	if err != nil {
		t.Fatalf("Init with restore: %v", err)
	}
	adoptView(h1, h2)
	if d1, d2 := h1.dumpRaw(), h2.dumpRaw(); string(d1) != string(d2) {
		t.Fatalf("restored state differs:\n%s\n---\n%s", d1, d2)
	}
	h2.check("monitoring")
	for _, s := range []spec{guaranteed("next-1", 1000), guaranteed("next-2", 2000), bestEffort("next-be")} {
		r1, r2 := h1.Create(s), h2.Create(s)
		if !r1.EqualVT(r2) {
			t.Errorf("%s: restored instance answered %v, the original %v", s.ID, r2, r1)
		}
		h2.check("monitoring")
	}
}

// TestRestoreForeign: assignments this policy would not give are kept as they
// are, and the reserved and exclusive CPUs stay clear of exclusive ones.
func TestRestoreForeign(t *testing.T) {
	pod := &abi.PodSandbox{Id: "p", Namespace: "default", QosClass: abi.QOSClass_QOS_CLASS_GUARANTEED}
	ctr := func(id string, milli int64, cpus, mems string) *abi.Container {
		return &abi.Container{Id: id, PodSandboxId: "p", Name: id, Namespace: "default", QosClass: abi.QOSClass_QOS_CLASS_GUARANTEED,
			Resources: &abi.Resources{CpuRequestMilli: milli}, Assignment: &abi.ContainerAdjustment{CpusetCpus: cpus, CpusetMems: mems}}
	}
	rs := &abi.RestoreState{Pods: []*abi.PodSandbox{pod}, Containers: []*abi.Container{
		ctr("ex", 2000, "4-5", "0"),      // exclusive, not where this policy would put it
		ctr("x-clash", 2000, "5-6", "0"), // overlaps "ex" (adopted first, by id): kept, unaccounted
		ctr("odd", 500, "3,7", "0"),      // no pool shares exactly these
		ctr("bad", 500, "x", "0"),        // unparsable
		ctr("unpinned", 500, "", ""),     // never pinned
		ctr("reserved", 2000, "0", "0"),  // on the reserved CPU
	}}
	h, err := tryHarness(t, "Desktop1Socket", "", rs)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	kinds := map[string]string{}
	for _, c := range h.dump().Containers {
		kinds[c.ID] = c.Kind + " " + c.CPUs
	}
	want := map[string]string{"ex": "exclusive 4-5", "x-clash": "fixed 5-6", "odd": "fixed 3,7", "bad": "fixed x",
		"unpinned": "preserved ", "reserved": "reserved 0"}
	for id, w := range want {
		if kinds[id] != w {
			t.Errorf("%s: adopted as %q, want %q", id, kinds[id], w)
		}
	}
	resp, err := h.Client.CreateContainer(context.Background(), guaranteed("next", 2000).Request())
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Adjustment.CpusetCpus; got != "1,9" {
		t.Errorf("next exclusive grant %q, want 1,9 (clear of 4-5 and the reserved 0)", got)
	}
}
