package state

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

func TestJournalAddRemove(t *testing.T) {
	j := journal(2, 3, 2)
	testkit.Equal(t, j.Counts(), Counts{Pods: 2, Containers: 3, Claims: 2})
	tests := []struct {
		name   string
		remove func() bool
		want   bool
		counts Counts
	}{
		{"pod", func() bool { return j.RemovePod("pod-0001") }, true, Counts{1, 3, 2}},
		{"unknown pod", func() bool { return j.RemovePod("pod-0001") }, false, Counts{1, 3, 2}},
		{"container", func() bool { return j.RemoveContainer("ctr-0000") }, true, Counts{1, 2, 2}},
		{"unknown container", func() bool { return j.RemoveContainer("nope") }, false, Counts{1, 2, 2}},
		{"claim", func() bool { return j.RemoveClaim("claim-0000") }, true, Counts{1, 2, 1}},
		{"unknown claim", func() bool { return j.RemoveClaim("claim-0000") }, false, Counts{1, 2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gen := j.Generation()
			testkit.Equal(t, tt.remove(), tt.want)
			testkit.Equal(t, j.Counts(), tt.counts)
			testkit.Equal(t, j.Generation() > gen, tt.want)
		})
	}
}

func TestJournalKeepsCopies(t *testing.T) {
	j := New()
	c, adj := container(1), adjustment(1)
	c.Assignment = &abi.ContainerAdjustment{CpusetCpus: "ignored"}
	j.AddContainer(c, adj)
	c.Name, adj.CpusetCpus = "changed", "changed"

	got, ok := j.Container("ctr-0001")
	testkit.Equal(t, ok, true)
	want := container(1)
	want.Assignment = adjustment(1)
	testkit.EqualProto(t, got, want)
	got.Name = "changed again"
	again, _ := j.Container("ctr-0001")
	testkit.Equal(t, again.GetName(), "app")
	testkit.Equal(t, c.Assignment.GetCpusetCpus(), "ignored") // the caller's message is untouched
}

func TestApplyUpdate(t *testing.T) {
	tests := []struct {
		name   string
		adj    *abi.ContainerAdjustment
		update *abi.ContainerUpdate
		want   *abi.ContainerAdjustment
	}{{
		name:   "cpus only",
		adj:    &abi.ContainerAdjustment{CpusetCpus: "0-1", CpusetMems: "0", RdtClass: "gold"},
		update: &abi.ContainerUpdate{ContainerId: "ctr-0000", CpusetCpus: "4-5"},
		want:   &abi.ContainerAdjustment{CpusetCpus: "4-5", CpusetMems: "0", RdtClass: "gold"},
	}, {
		name:   "every field",
		adj:    &abi.ContainerAdjustment{CpusetCpus: "0-1", Env: []*abi.KeyValue{{Key: "A", Value: "1"}}},
		update: &abi.ContainerUpdate{ContainerId: "ctr-0000", CpusetCpus: "2", CpusetMems: "1", RdtClass: "silver", BlockioClass: "slow"},
		want: &abi.ContainerAdjustment{CpusetCpus: "2", CpusetMems: "1", RdtClass: "silver", BlockioClass: "slow",
			Env: []*abi.KeyValue{{Key: "A", Value: "1"}}},
	}, {
		name:   "no adjustment at creation",
		update: &abi.ContainerUpdate{ContainerId: "ctr-0000", CpusetMems: "1"},
		want:   &abi.ContainerAdjustment{CpusetMems: "1"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := New()
			j.AddContainer(container(0), tt.adj)
			testkit.Equal(t, j.ApplyUpdate(tt.update), true)
			got, _ := j.Container("ctr-0000")
			testkit.EqualProto(t, got.GetAssignment(), tt.want)
		})
	}
	t.Run("every member of a group", func(t *testing.T) {
		j := New()
		for i := range 3 {
			j.AddContainer(container(i), &abi.ContainerAdjustment{CpusetCpus: "0", CpusetMems: "0"})
		}
		testkit.Equal(t, j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: "ctr-0002", CpusetCpus: "4-5", AlsoContainerIds: []string{"ctr-0000", "nope"}}), false)
		for id, cpus := range map[string]string{"ctr-0000": "4-5", "ctr-0001": "0", "ctr-0002": "4-5"} {
			got, _ := j.Container(id)
			testkit.EqualProto(t, got.GetAssignment(), &abi.ContainerAdjustment{CpusetCpus: cpus, CpusetMems: "0"})
		}
	})
	t.Run("unknown container", func(t *testing.T) {
		j := journal(0, 1, 0)
		gen := j.Generation()
		testkit.Equal(t, j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: "nope", CpusetCpus: "1"}), false)
		testkit.Equal(t, j.Generation(), gen)
	})
}

func TestHasContainer(t *testing.T) {
	j := New()
	j.AddContainer(container(0), adjustment(0))
	testkit.Equal(t, j.HasContainer("ctr-0000"), true)
	testkit.Equal(t, j.HasContainer("nope"), false)
	testkit.Equal(t, testing.AllocsPerRun(10, func() { j.HasContainer("ctr-0000") }), 0.0)
}

func TestHasPod(t *testing.T) {
	j := New()
	j.AddPod(pod(0))
	testkit.Equal(t, j.HasPod("pod-0000"), true)
	testkit.Equal(t, j.HasPod("nope"), false)
	testkit.Equal(t, testing.AllocsPerRun(10, func() { j.HasPod("pod-0000") }), 0.0)
}

func TestNilArgumentsIgnored(t *testing.T) {
	j := New()
	j.AddPod(nil)
	j.AddContainer(nil, adjustment(0))
	j.AddClaim(nil)
	testkit.Equal(t, j.ApplyUpdate(nil), false)
	testkit.Equal(t, j.Counts(), Counts{})
	testkit.Equal(t, j.Generation(), uint64(0))
}

func TestRestoreStateSorted(t *testing.T) {
	j := New()
	for _, i := range []int{3, 1, 2} {
		j.AddPod(pod(i))
		j.AddContainer(container(i), adjustment(i))
		j.AddClaim(claim(i))
	}
	rs := j.RestoreState()
	for i := range 3 {
		testkit.Equal(t, rs.Pods[i].GetId(), pod(i+1).Id)
		testkit.Equal(t, rs.Containers[i].GetId(), container(i+1).Id)
		testkit.Equal(t, rs.Claims[i].GetClaim().GetUid(), claim(i+1).Claim.Uid)
		testkit.Equal(t, j.ClaimUIDs()[i], claim(i+1).Claim.Uid)
	}
	rs.Pods[0].Name = "changed" // a copy
	p, _ := j.Pod("pod-0001")
	testkit.Equal(t, p.GetName(), "web-1")

	back := FromRestoreState(rs)
	testkit.Equal(t, back.Counts(), j.Counts())
	testkit.Equal(t, back.Generation(), uint64(0))
	testkit.EqualProto(t, FromRestoreState(nil).RestoreState(), &abi.RestoreState{})
}
