package topologyaware_test

import (
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestL3Pools: TwoL3 is one socket and one NUMA node of 8 cores whose two
// halves have an L3 cache each. As nri-plugins, the node's pool gets a
// child pool per L3, exclusive grants stay within one L3, and
// unlimitedBurstable: l3cache places Burstable containers in them.
func TestL3Pools(t *testing.T) { nativeAndWasm(t, l3Scenario) }

func l3Scenario(t *testing.T, open opener) {
	h := mustOpen(t, open, "TwoL3", "unlimitedBurstable: l3cache\n")
	var l3 []string // each L3 pool's CPUs
	for _, p := range h.dump().Pools {
		if strings.HasPrefix(p.Name, "l3cache") {
			l3 = append(l3, p.CPUs)
		}
	}
	if len(l3) != 2 {
		t.Fatalf("L3 pools %v, want 2", l3)
	}
	within := func(id string) bool {
		got := policytest.MustSet(t, h.Containers[id].GetAssignment().GetCpusetCpus())
		for _, cpus := range l3 {
			if got.IsSubsetOf(policytest.MustSet(t, cpus)) {
				return true
			}
		}
		return false
	}
	// 3 cores, then 3 more: packed over the whole node the second would
	// take the last free core of one L3 and two of the other.
	for _, id := range []string{"g6a", "g6b"} {
		h.Create(guaranteed(id, 6000))
		if !within(id) {
			t.Errorf("%s: cpus %s span L3 caches %s", id, h.Containers[id].GetAssignment().GetCpusetCpus(), strings.Join(l3, " | "))
		}
	}
	h.Create(burstable("bu", 100))
	if !within("bu") {
		t.Errorf("unlimited Burstable with unlimitedBurstable: l3cache got %s, not an L3 pool's CPUs", h.Containers["bu"].GetAssignment().GetCpusetCpus())
	}
	h.check()
}

// TestL3PoolOrder: a node's L3 pools come in the kernel's order of their
// caches (sysfs ids), as nri-plugins' L3CacheIDs, and that order breaks the
// tie between equal L3 pools (one reserved CPU in each). nri-plugins' e2e
// n4c128/test19-cacheclusters numbers its L3s out of CPU order
// (docs/fidelity.md).
func TestL3PoolOrder(t *testing.T) { nativeAndWasm(t, l3OrderScenario) }

func l3OrderScenario(t *testing.T, open opener) {
	for _, tc := range []struct {
		machine string
		first   string // the first L3 pool's CPUs
		shared  string // its CPUs but the reserved one
	}{
		{"TwoL3", "0-3,8-11", "1-3,8-11"},
		{"TwoL3-ids10", "4-7,12-15", "5-7,12-15"},
	} {
		h := mustOpen(t, open, tc.machine, "unlimitedBurstable: l3cache\nreservedResources:\n  cpu: cpuset:0,4\n")
		var l3 []string
		for _, p := range h.dump().Pools {
			if strings.HasPrefix(p.Name, "l3cache") {
				l3 = append(l3, p.CPUs)
			}
		}
		if len(l3) != 2 || l3[0] != tc.first {
			t.Errorf("%s: L3 pools %v, want %s first", tc.machine, l3, tc.first)
		}
		h.Create(burstable("bu", 100))
		if got := h.Containers["bu"].GetAssignment().GetCpusetCpus(); got != tc.shared {
			t.Errorf("%s: unlimited Burstable in an idle node got %s, want the first L3's %s", tc.machine, got, tc.shared)
		}
		h.check()
	}
}
