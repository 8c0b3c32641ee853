package policytest

import (
	"maps"
	"slices"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// CheckPlacements reports, as errors on tb, every container whose cpuset
// or mems, as the runtime holds them, do not parse or reach outside the
// machine: CPUs that are not online, memory nodes without memory. An empty
// cpuset or mems (not pinned) passes.
func CheckPlacements(tb testing.TB, topo *abi.Topology, containers map[string]*abi.Container) {
	tb.Helper()
	var online, withMemory []uint32
	for _, c := range topo.GetCpus() {
		online = append(online, c.Id)
	}
	for _, n := range topo.GetNumaNodes() {
		if n.MemoryBytes > 0 {
			withMemory = append(withMemory, n.Id)
		}
	}
	cpus, mems := cpuset.New(online...), cpuset.New(withMemory...)
	for _, id := range slices.Sorted(maps.Keys(containers)) {
		a := containers[id].GetAssignment()
		if set, err := cpuset.Parse(a.GetCpusetCpus()); err != nil {
			tb.Errorf("%s: cpus %q: %v", id, a.GetCpusetCpus(), err)
		} else if out := set.Difference(cpus); !out.IsEmpty() {
			tb.Errorf("%s: cpus %s include CPUs %s that are not online (online: %s)", id, set, out, cpus)
		}
		if set, err := cpuset.Parse(a.GetCpusetMems()); err != nil {
			tb.Errorf("%s: mems %q: %v", id, a.GetCpusetMems(), err)
		} else if out := set.Difference(mems); !out.IsEmpty() {
			tb.Errorf("%s: mems %s name nodes %s without memory (nodes with memory: %s)", id, set, out, mems)
		}
	}
}

// CheckDisjoint reports, as errors on tb, every CPU that two exclusive
// holders (containers, claims, balloons: whatever the policy grants
// exclusively, by name) both hold.
func CheckDisjoint(tb testing.TB, holders map[string]cpuset.Set) {
	tb.Helper()
	owner := map[uint32]string{}
	for _, name := range slices.Sorted(maps.Keys(holders)) {
		for id := range holders[name].All() {
			if o, taken := owner[id]; taken {
				tb.Errorf("CPU %d is held by both %s and %s", id, o, name)
				continue
			}
			owner[id] = name
		}
	}
}
