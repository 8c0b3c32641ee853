package topology

import (
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Priority is nri-plugins' CPU priority class (pkg/cpuallocator
// CPUPriority): the class each CPU falls in, which topology-aware's
// prefer-cpu-priority and balloons' preferCoreType pick CPUs by.
type Priority int8

// The classes, in nri-plugins' order.
const (
	PriorityHigh Priority = iota
	PriorityNormal
	PriorityLow
	// NumPriorities is the number of classes.
	NumPriorities
)

// EPPUnknown is the rank of an energy-performance preference nri-plugins'
// sysfs.EPPFromString does not name: "default", a raw number, or none.
const EPPUnknown = 4

// EPPRank is nri-plugins' sysfs.EPP of a CPU's energy-performance
// preference (ABI v1.4 CPU.energy_performance_preference): performance 0,
// balance_performance 1, balance_power 2, power 3, anything else
// EPPUnknown. A higher rank prefers performance less.
func EPPRank(s string) int {
	switch s {
	case "performance":
		return 0
	case "balance_performance":
		return 1
	case "balance_power":
		return 2
	case "power":
		return 3
	}
	return EPPUnknown
}

// Priorities classifies the CPUs of t in online as nri-plugins' CPU
// allocator does when SST is not active (discoverCpufreqPriority), package
// by package: CPUs above the package's lowest base frequency are high,
// those at it low (normal when the package has one base frequency or
// none); efficient cores are low whatever their frequency or preference;
// then, where the package's CPUs have more than one known
// energy-performance preference, the preference decides over the base
// frequency: a CPU whose rank (EPPRank) is below the package's highest
// known one is high, every other low, an unknown one included. The answer
// is indexed by CPU id (up to t's highest); CPUs not in online are
// PriorityNormal and in no class's set.
func Priorities(t *abi.Topology, online cpuset.Set) (of []Priority, sets [NumPriorities]cpuset.Set) {
	byPkg := map[uint32][]*abi.CPU{}
	var pkgs []uint32
	maxID := -1
	for _, c := range t.GetCpus() {
		maxID = max(maxID, int(c.GetId()))
		if !online.Contains(c.GetId()) {
			continue
		}
		if _, ok := byPkg[c.GetPackageId()]; !ok {
			pkgs = append(pkgs, c.GetPackageId())
		}
		byPkg[c.GetPackageId()] = append(byPkg[c.GetPackageId()], c)
	}
	of = make([]Priority, maxID+1)
	for i := range of {
		of[i] = PriorityNormal
	}
	var ids [NumPriorities][]uint32
	for _, pkg := range pkgs {
		cpus := byPkg[pkg]
		var freqs []uint64
		var epps []int // the package's known preferences, by rank
		for _, c := range cpus {
			if f := c.GetBaseFreqKhz(); f > 0 && !slices.Contains(freqs, f) {
				freqs = append(freqs, f)
			}
			if r := EPPRank(c.GetEnergyPerformancePreference()); r != EPPUnknown && !slices.Contains(epps, r) {
				epps = append(epps, r)
			}
		}
		var lowestFreq uint64
		if len(freqs) > 0 {
			lowestFreq = slices.Min(freqs)
		}
		var leastPerf int
		if len(epps) > 0 {
			leastPerf = slices.Max(epps)
		}
		for _, c := range cpus {
			p := PriorityNormal
			if len(freqs) > 1 {
				p = PriorityLow
				if c.GetBaseFreqKhz() > lowestFreq {
					p = PriorityHigh
				}
			}
			switch {
			case c.GetCoreType() == abi.CoreType_CORE_TYPE_EFFICIENT:
				p = PriorityLow
			case len(epps) > 1:
				p = PriorityLow
				if EPPRank(c.GetEnergyPerformancePreference()) < leastPerf {
					p = PriorityHigh
				}
			}
			of[c.GetId()] = p
			ids[p] = append(ids[p], c.GetId())
		}
	}
	for p := range sets {
		sets[p] = cpuset.New(ids[p]...)
	}
	return of, sets
}
