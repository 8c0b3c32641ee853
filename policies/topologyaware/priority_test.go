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
	// N4C16-freq whose package 0 also has energy-performance preferences
	// and efficient cores: cpu0-3 (3 GHz) "power", cpu4-7 (2 GHz)
	// "balance_performance", cpu4-5 efficient cores. The preference
	// decides over the frequency (cpu6-7 high, cpu0-3 low), the core kind
	// over the preference (cpu4-5 low); package 1 stays normal.
	"N4C16-freq-epp": func(tb testing.TB) *abi.Topology {
		return withCPUs(tb, "N4C16", func(c *abi.CPU) {
			c.BaseFreqKhz = 2000000
			c.CoreType = abi.CoreType_CORE_TYPE_PERFORMANCE
			switch {
			case c.Id < 4:
				c.BaseFreqKhz, c.EnergyPerformancePreference = 3000000, "power"
			case c.Id < 8:
				c.EnergyPerformancePreference = "balance_performance"
			}
			if c.Id == 4 || c.Id == 5 {
				c.CoreType = abi.CoreType_CORE_TYPE_EFFICIENT
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
// those at it low; a package of one frequency is normal; within a package
// of several known energy-performance preferences, those preferring
// performance more than the least are high, the others low, whatever
// their frequency. A container
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
		// Energy-performance preferences as the host reads them
		// (topologytest.N4C16EPP): package 0's cpu4-5 "performance"
		// are high, the rest of it low, "default" cpu7 included;
		// package 1 has one known preference, so it is normal, and the
		// reservation takes cpu8. Low and normal pick pools by their
		// class: lo goes to node 1 (node 0 holds none) and takes its
		// low cpu6, not cpu4; n goes to package 1. High picks pools by
		// performance cores, every CPU of a part without core kinds
		// (nri-plugins' GetScore), so hi goes by the usual order to
		// node 3, which has no high CPU.
		{"N4C16EPP", "", []spec{
			guaranteed("none", 1000),
			guaranteed("lo", 1000).With(annCPUPriority, "low"),
			guaranteed("hi", 1000).With(annCPUPriority, "high"),
			guaranteed("lo2", 1000).With(annCPUPriority, "low"),
			guaranteed("n", 1000).With(annCPUPriority, "normal"),
		}, []string{"0", "6", "12", "1", "9"}, "8"},
		// Five CPUs of package 0: high takes the high core 4-5 and
		// three more, low every low CPU but one (nri-plugins' CPU
		// allocator gives the same CPUs from 0-7); without preferences
		// either would get 0-4.
		{"N4C16EPP", "", []spec{guaranteed("big", 5000).With(annCPUPriority, "high")}, []string{"0-2,4-5"}, "8"},
		{"N4C16EPP", "", []spec{guaranteed("big", 5000).With(annCPUPriority, "low")}, []string{"0-3,6"}, "8"},
		// The preference over the frequency, the core kind over the
		// preference: high takes cpu6-7 (not the faster cpu0-3, nor
		// the efficient cpu4-5 whose preference is as high), low the
		// efficient cores.
		{"N4C16-freq-epp", "", []spec{
			guaranteed("hi", 5000).With(annCPUPriority, "high"),
			guaranteed("lo", 1000).With(annCPUPriority, "low"),
		}, []string{"0-2,6-7", "4"}, "8"},
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
