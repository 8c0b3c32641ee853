package topology_test

import (
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/topology"
)

// TestPriorities: nri-plugins' classes, package by package. Package 0 (cpu0-3)
// has two base frequencies, cpu3 an efficient core: high 0-1, low 2-3.
// Package 1 (cpu4-6) has no frequencies and two known energy-performance
// preferences: high 4 (performance), low 5 (power) and 6 (unknown). A
// machine with neither is all normal; a CPU not online is in no class.
func TestPriorities(t *testing.T) {
	topo := &abi.Topology{}
	for id, c := range []struct {
		freq uint64
		epp  string
		kind abi.CoreType
	}{
		{3000000, "", 0}, {3000000, "", 0}, {2000000, "", 0}, {2000000, "", abi.CoreType_CORE_TYPE_EFFICIENT},
		{0, "performance", 0}, {0, "power", 0}, {0, "default", 0},
	} {
		topo.Cpus = append(topo.Cpus, &abi.CPU{Id: uint32(id), PackageId: uint32(id / 4), BaseFreqKhz: c.freq,
			EnergyPerformancePreference: c.epp, CoreType: c.kind})
	}
	for _, tc := range []struct {
		name              string
		topo              *abi.Topology
		online            string
		high, normal, low string
	}{
		{"frequencies, core type, preferences", topo, "0-6", "0-1,4", "", "2-3,5-6"},
		{"an offline CPU is in no class", topo, "1-6", "1,4", "", "2-3,5-6"},
		{"nothing to tell CPUs apart", smallMachine(), "0-6", "", "0-6", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			of, sets := topology.Priorities(tc.topo, cpuset.MustParse(tc.online))
			for p, want := range []string{tc.high, tc.normal, tc.low} {
				if got := sets[p].String(); got != want {
					t.Errorf("class %d: %q, want %q", p, got, want)
				}
				for id := range sets[p].All() {
					if of[id] != topology.Priority(p) {
						t.Errorf("cpu%d: class %d, in set %d", id, of[id], p)
					}
				}
			}
		})
	}
}
