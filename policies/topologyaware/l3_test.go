package topologyaware_test

import (
	"strings"
	"testing"
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
		got := mustSet(t, h.ctrs[id].GetAssignment().GetCpusetCpus())
		for _, cpus := range l3 {
			if got.IsSubsetOf(mustSet(t, cpus)) {
				return true
			}
		}
		return false
	}
	// 3 cores, then 3 more: packed over the whole node the second would
	// take the last free core of one L3 and two of the other.
	for _, id := range []string{"g6a", "g6b"} {
		h.create(guaranteed(id, 6000))
		if !within(id) {
			t.Errorf("%s: cpus %s span L3 caches %s", id, h.ctrs[id].GetAssignment().GetCpusetCpus(), strings.Join(l3, " | "))
		}
	}
	h.create(burstable("bu", 100))
	if !within("bu") {
		t.Errorf("unlimited Burstable with unlimitedBurstable: l3cache got %s, not an L3 pool's CPUs", h.ctrs["bu"].GetAssignment().GetCpusetCpus())
	}
	h.check()
}
