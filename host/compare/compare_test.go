package compare_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/compare"
	"github.com/nriwasm/nriwasm/host/validate"
)

// answer is a transport that answers every call with resp.
type answer struct{ resp *abi.Response }

func (a answer) Call(context.Context, abi.Method, abi.Message) (*abi.Response, error) {
	return a.resp, nil
}

func removeAnswer(us ...*abi.ContainerUpdate) *abi.Response {
	return &abi.Response{Result: &abi.Response_RemoveContainer{RemoveContainer: &abi.RemoveContainerResponse{Updates: us}}}
}

func session(t *testing.T, live ...string) *compare.Session {
	t.Helper()
	topo := &abi.Topology{NumaNodes: []*abi.NUMANode{{Id: 0, MemoryBytes: 1 << 30}}}
	for id := range uint32(8) {
		topo.Cpus = append(topo.Cpus, &abi.CPU{Id: id})
	}
	limits, err := validate.New(topo)
	if err != nil {
		t.Fatal(err)
	}
	var running []*abi.Container
	for _, id := range live {
		running = append(running, &abi.Container{Id: id})
	}
	return compare.NewSession(limits, running)
}

// TestGroupedOutcome: Call keeps a group as the policy sent it, and Outcome
// lists one update per member with the group's values, sorted; a group with
// a member that is not running is refused naming the member as sent.
func TestGroupedOutcome(t *testing.T) {
	ctx := context.Background()
	m := abi.Method_METHOD_REMOVE_CONTAINER
	group := &abi.ContainerUpdate{ContainerId: "c", CpusetCpus: "3,1-2", AlsoContainerIds: []string{"a", "b"}}
	resp, err := compare.Call(ctx, answer{removeAnswer(group, &abi.ContainerUpdate{ContainerId: "d", CpusetMems: "0"})}, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if us := resp.GetRemoveContainer().GetUpdates(); len(us) != 2 || us[0] != group {
		t.Fatalf("Call's updates = %v, want the group as sent", us)
	}
	got := session(t, "a", "b", "c", "d").Outcome(m, nil, resp, nil)
	want := []compare.Update{{Container: "a", CPUs: "1-3"}, {Container: "b", CPUs: "1-3"}, {Container: "c", CPUs: "1-3"}, {Container: "d", Mems: "0"}}
	if got.Error != "" || !slices.Equal(got.Updates, want) {
		t.Fatalf("Outcome = %+v, want updates %+v", got, want)
	}

	got = session(t, "a", "c").Outcome(m, nil, resp, nil)
	if !strings.Contains(got.Error, "updates[0].also_container_ids[1]") {
		t.Fatalf("Outcome with b gone = %+v, want a refusal naming updates[0].also_container_ids[1]", got)
	}

	_, err = compare.Call(ctx, answer{removeAnswer(&abi.ContainerUpdate{ContainerId: "c", AlsoContainerIds: []string{""}})}, m, nil)
	if ae, ok := errors.AsType[*abi.AnswerError](err); !ok || ae.Field != "updates[0].also_container_ids[0]" {
		t.Fatalf("Call with an empty member = %v, want an AnswerError naming updates[0].also_container_ids[0]", err)
	}
}
