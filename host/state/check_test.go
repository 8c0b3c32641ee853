package state

import (
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

// TestCheck restores assignments a node of 8 CPUs and one NUMA node cannot
// take: each is dropped and named, its container stays journaled, and a valid
// assignment is kept.
func TestCheck(t *testing.T) {
	topo := &abi.Topology{NumaNodes: []*abi.NUMANode{{Id: 0, MemoryBytes: 1 << 30}}}
	for id := range uint32(8) {
		topo.Cpus = append(topo.Cpus, &abi.CPU{Id: id})
	}
	assign := map[int]*abi.ContainerAdjustment{
		1: {CpusetCpus: "0-999"},
		2: {CpusetMems: "7"},
		3: {MemoryPolicy: &abi.MemoryPolicy{Mode: -3}},
		4: {CpusetCpus: "2-3", CpusetMems: "0"},
	}
	j := New()
	for i, a := range assign {
		c := container(i)
		c.Assignment = a
		j.containers[c.GetId()] = c
	}
	limits, err := validate.New(topo)
	if err != nil {
		t.Fatal(err)
	}
	err = j.Check(limits)
	for _, want := range []string{`"ctr-0001": assignment dropped: adjustment.cpuset_cpus`, `"ctr-0002": assignment dropped: adjustment.cpuset_mems`, `"ctr-0003": assignment dropped: adjustment.memory_policy.mode`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check error = %v, want it to contain %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "ctr-0004") {
		t.Errorf("Check refused the valid assignment: %v", err)
	}
	testkit.Equal(t, j.Counts().Containers, 4)
	for i := range 3 {
		c, _ := j.Container(container(i + 1).GetId())
		if c.GetAssignment() != nil {
			t.Errorf("container %d keeps its refused assignment %v", i+1, c.GetAssignment())
		}
	}
	c, _ := j.Container(container(4).GetId())
	testkit.EqualProto(t, c.GetAssignment(), assign[4])
}
