package topologyaware_test

import (
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

const annCPUPriority = "prefer-cpu-priority.resource-policy.nri.io"

// derivedMachines are fixture machines changed as a test needs, by the name
// openOn is given.
var derivedMachines = map[string]func(tb testing.TB) *abi.Topology{
	// N4C16 with cpu4-5 (a core of node 1) efficient cores, as nri-plugins'
	// test08 overrides it (OVERRIDE_SYS_ATOM_CPUS=4-5).
	"N4C16-atom45": func(tb testing.TB) *abi.Topology {
		return withCPUs(tb, "N4C16", func(c *abi.CPU) {
			c.CoreType = abi.CoreType_CORE_TYPE_PERFORMANCE
			if c.Id == 4 || c.Id == 5 {
				c.CoreType = abi.CoreType_CORE_TYPE_EFFICIENT
			}
		})
	},
	// N4C16 whose package 0 has two base frequencies: node 0 (cpu0-3) at
	// 3 GHz, node 1 (cpu4-7) at 2 GHz; package 1 has one, 2 GHz.
	"N4C16-freq": func(tb testing.TB) *abi.Topology {
		return withCPUs(tb, "N4C16", func(c *abi.CPU) {
			c.BaseFreqKhz = 2000000
			if c.Id < 4 {
				c.BaseFreqKhz = 3000000
			}
		})
	},
	// TwoL3 whose kernel numbers its L3 caches the other way round: the
	// cache of cores 4-7 (cpu4-7,12-15) has sysfs id 0, that of cores 0-3
	// id 1.
	"TwoL3-ids10": func(tb testing.TB) *abi.Topology {
		t := policytest.Machine(tb, "TwoL3").CloneVT()
		for _, c := range t.Caches {
			if c.Level == 3 {
				c.SysfsId = 1
				if c.Cpus[0] >= 4 {
					c.SysfsId = 0
				}
			}
		}
		return t
	},
}

// withCPUs is a copy of fixture machine name with f applied to every CPU.
func withCPUs(tb testing.TB, name string, f func(c *abi.CPU)) *abi.Topology {
	t := policytest.Machine(tb, name).CloneVT()
	for _, c := range t.Cpus {
		f(c)
	}
	return t
}

// TestCPUPriority: prefer-cpu-priority and defaultCPUPriority steer exclusive
// CPUs by nri-plugins' CPU priorities: efficient cores are low; within a
// package of several base frequencies, CPUs above the lowest are high and
// those at it low; a package of one frequency is normal. A container
// preferring a class goes to a pool whose free CPUs of that class hold it,
// and takes those CPUs first; the reserved CPUs are normal ones.
func TestCPUPriority(t *testing.T) { nativeAndWasm(t, cpuPriorityScenario) }

func cpuPriorityScenario(t *testing.T, open opener) {
	tests := []struct {
		machine, config string
		specs           []spec
		want            []string // each spec's CPUs
		reserved        string
	}{
		// test08's first half: low goes to the efficient cores, the one
		// without a preference elsewhere (policytest names every
		// container "c").
		{"N4C16-atom45", "", []spec{
			guaranteed("a", 1000).With(annCPUPriority, "low"),
			guaranteed("b", 1000),
			guaranteed("c", 1000).With(annCPUPriority+"/container.c", "low"),
		}, []string{"4", "8", "5"}, "0"},
		// Two CPUs preferring low: the efficient core, whole; "default"
		// and an unknown value mean defaultCPUPriority.
		{"N4C16-atom45", "defaultCPUPriority: low\n", []spec{
			guaranteed("a", 2000).With(annCPUPriority, "default"),
			guaranteed("b", 1000).With(annCPUPriority, "urgent"),
			guaranteed("c", 1000).With(annCPUPriority, "none"),
		}, []string{"4-5", "8", "12"}, "0"},
		// Frequencies: the reserved CPU is normal (package 1), low
		// is node 1, no preference takes node 0 (the most free
		// capacity, lowest id) as on plain N4C16.
		{"N4C16-freq", "", []spec{
			guaranteed("lo", 1000).With(annCPUPriority, "low"),
			guaranteed("none", 1000),
			guaranteed("n", 1000).With(annCPUPriority, "normal"),
		}, []string{"4", "0", "12"}, "8"},
		// The same without priorities: no class differs, so the
		// annotations change nothing.
		{"N4C16", "", []spec{
			guaranteed("lo", 1000).With(annCPUPriority, "low"),
			guaranteed("none", 1000),
		}, []string{"4", "8"}, "0"},
	}
	for _, tc := range tests {
		h := mustOpen(t, open, tc.machine, tc.config)
		if got := h.dump().Reserved; got != tc.reserved {
			t.Errorf("%s %q: reserved %s, want %s", tc.machine, tc.config, got, tc.reserved)
		}
		for i, s := range tc.specs {
			h.Create(s)
			if got := h.poolOf(s.ID)[0]; got != tc.want[i] {
				t.Errorf("%s %q: %s got cpus %s, want %s", tc.machine, tc.config, s.ID, got, tc.want[i])
			}
		}
		h.check()
	}
}

// TestCPUPriorityNoFit: a container preferring a class that no pool has
// enough of still gets CPUs by the usual order, the preferred ones first.
func TestCPUPriorityNoFit(t *testing.T) {
	h := newHarness(t, "N4C16-atom45", "")
	h.Create(guaranteed("a", 3000).With(annCPUPriority, "low"))
	got := policytest.MustSet(t, h.poolOf("a")[0])
	if !cpuset.New(4, 5).IsSubsetOf(got) || got.Size() != 3 {
		t.Errorf("a: cpus %s, want 3 CPUs with 4-5", got)
	}
	h.check()
}
