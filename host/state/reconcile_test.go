package state

import (
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

func ids(cs []*abi.Container) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.GetId())
	}
	return out
}

func TestReconcile(t *testing.T) {
	// The journal knows containers 0-3 and pods 0-1; the runtime reports
	// containers 3, 1 and a new 9 (changed state), and pods 1 and 2.
	j := journal(2, 4, 1)
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: "ctr-0001", CpusetCpus: "100-101"})
	reported := []*abi.Container{container(3), container(1), container(9)}
	for _, c := range reported {
		c.State = abi.ContainerState_CONTAINER_STATE_STOPPED
	}
	reported[2].Assignment = &abi.ContainerAdjustment{CpusetCpus: "forged"}

	forgotten, annotated := j.Reconcile([]*abi.PodSandbox{pod(1), pod(2)}, reported)

	t.Run("forgotten", func(t *testing.T) {
		testkit.Equal(t, len(forgotten), 2)
		for i, id := range []string{"ctr-0000", "ctr-0002"} {
			testkit.Equal(t, forgotten[i].GetId(), id)
		}
		testkit.EqualProto(t, forgotten[0].GetAssignment(), adjustment(0))
	})
	t.Run("annotated", func(t *testing.T) {
		testkit.Equal(t, len(annotated), 3)
		want1 := adjustment(1)
		want1.CpusetCpus = "100-101"
		wants := map[string]*abi.ContainerAdjustment{"ctr-0001": want1, "ctr-0003": adjustment(3), "ctr-0009": nil}
		for i, id := range []string{"ctr-0001", "ctr-0003", "ctr-0009"} {
			c := annotated[i]
			testkit.Equal(t, c.GetId(), id)
			testkit.Equal(t, c.GetState(), abi.ContainerState_CONTAINER_STATE_STOPPED)
			testkit.EqualProto(t, c.GetAssignment(), wants[id])
		}
	})
	t.Run("journal", func(t *testing.T) {
		testkit.Equal(t, j.Counts(), Counts{Pods: 2, Containers: 3, Claims: 1})
		for _, id := range []string{"pod-0001", "pod-0002"} {
			_, ok := j.Pod(id)
			testkit.Equal(t, ok, true)
		}
		_, ok := j.Pod("pod-0000")
		testkit.Equal(t, ok, false)
		rs := j.RestoreState()
		testkit.EqualProto(t, &abi.RestoreState{Containers: rs.Containers}, &abi.RestoreState{Containers: annotated})
	})
	t.Run("caller's messages untouched", func(t *testing.T) {
		testkit.Equal(t, reported[1].GetAssignment() == nil, true)
		testkit.Equal(t, reported[2].GetAssignment().GetCpusetCpus(), "forged")
	})
	t.Run("annotated are copies", func(t *testing.T) {
		annotated[0].Assignment.CpusetCpus = "changed"
		c, _ := j.Container("ctr-0001")
		testkit.Equal(t, c.GetAssignment().GetCpusetCpus(), "100-101")
	})
}

func TestReconcileEmpty(t *testing.T) {
	tests := []struct {
		name          string
		j             *Journal
		reported      []*abi.Container
		wantForgotten []string
		wantAnnotated []string
	}{
		{"both empty", New(), nil, []string{}, []string{}},
		{"runtime empty", journal(1, 2, 0), nil, []string{"ctr-0000", "ctr-0001"}, []string{}},
		{"journal empty", New(), []*abi.Container{container(1), nil, container(0)}, []string{}, []string{"ctr-0000", "ctr-0001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forgotten, annotated := tt.j.Reconcile(nil, tt.reported)
			testkit.Equal(t, strings.Join(ids(forgotten), ","), strings.Join(tt.wantForgotten, ","))
			testkit.Equal(t, strings.Join(ids(annotated), ","), strings.Join(tt.wantAnnotated, ","))
			testkit.Equal(t, tt.j.Counts().Containers, len(tt.wantAnnotated))
			testkit.Equal(t, tt.j.Counts().Pods, 0)
		})
	}
}
