package nri

import (
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// TestUpdatesExpandsGroups: NRI's update list has no groups, so a grouped
// update becomes one NRI update per container, each with the group's values,
// in the order the policy listed them.
func TestUpdatesExpandsGroups(t *testing.T) {
	got := updates([]*abi.ContainerUpdate{
		{ContainerId: "a", CpusetCpus: "0-3", CpusetMems: "0", RdtClass: "gold", AlsoContainerIds: []string{"b", "c"}},
		{ContainerId: "d", CpusetMems: "1"},
	})
	type flat struct{ id, cpus, mems, rdt string }
	want := []flat{{"a", "0-3", "0", "gold"}, {"b", "0-3", "0", "gold"}, {"c", "0-3", "0", "gold"}, {"d", "", "1", ""}}
	if len(got) != len(want) {
		t.Fatalf("%d NRI updates (%v), want %d", len(got), got, len(want))
	}
	for i, u := range got {
		res := u.GetLinux().GetResources()
		if g := (flat{u.GetContainerId(), res.GetCpu().GetCpus(), res.GetCpu().GetMems(), res.GetRdtClass().GetValue()}); g != want[i] {
			t.Errorf("update %d = %+v, want %+v", i, g, want[i])
		}
	}
}

// TestUpdatesGroupAllocations: a group's members share its NRI values, built
// once, so a 200-member group costs the list, one message per member and the
// shared part, not a copy of the values per member.
func TestUpdatesGroupAllocations(t *testing.T) {
	g := &abi.ContainerUpdate{ContainerId: "c0", CpusetCpus: "0-63", CpusetMems: "0", RdtClass: "gold", BlockioClass: "slow"}
	for i := 1; i < 200; i++ {
		g.AlsoContainerIds = append(g.AlsoContainerIds, fmt.Sprintf("c%d", i))
	}
	us := []*abi.ContainerUpdate{g}
	if n := testing.AllocsPerRun(10, func() { updates(us) }); n > 200+10 {
		t.Fatalf("%v allocations for a 200-member group, want one per member and a few more", n)
	}
}

// TestStartingOwesGroupMembers: a member of a group that is created but not
// started is owed the group's values under its own id.
func TestStartingOwesGroupMembers(t *testing.T) {
	s := newStarting()
	s.create("b")
	s.sent([]*abi.ContainerUpdate{{ContainerId: "a", CpusetCpus: "0-3", AlsoContainerIds: []string{"b"}}})
	u := s.started("b")
	if u.GetContainerId() != "b" || u.GetCpusetCpus() != "0-3" || len(u.GetAlsoContainerIds()) != 0 {
		t.Fatalf("owed to b: %v, want b's own update to 0-3", u)
	}
	if u := s.started("a"); u != nil {
		t.Fatalf("owed to a, which was never created here: %v", u)
	}
}
