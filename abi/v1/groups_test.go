package v1_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// A KeepGroups client hands the group on as the policy sent it, the same
// message, and still refuses an empty id with the field as sent.
func TestClientKeepGroups(t *testing.T) {
	group := upd("a", "0-3", "0", "b", "c")
	ft := &fakeTransport{resp: &abi.Response{Result: &abi.Response_RemoveContainer{RemoveContainer: &abi.RemoveContainerResponse{
		Updates: []*abi.ContainerUpdate{group, upd("d", "4", "")},
	}}}}
	got, err := abi.NewClient(ft, abi.KeepGroups()).RemoveContainer(context.Background(), &abi.RemoveContainerRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if us := got.GetUpdates(); len(us) != 2 || us[0] != group || !slices.Equal(us[0].GetAlsoContainerIds(), []string{"b", "c"}) {
		t.Fatalf("updates = %v, want the group kept as sent", us)
	}

	for _, tt := range []struct {
		name  string
		us    []*abi.ContainerUpdate
		field string
	}{
		{"first of the group", []*abi.ContainerUpdate{upd("a", "0", "", "", "b")}, "updates[0].also_container_ids[0]"},
		{"in the second update", []*abi.ContainerUpdate{upd("a", "0", ""), upd("b", "1", "", "c", "")}, "updates[1].also_container_ids[1]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTransport{resp: &abi.Response{Result: &abi.Response_CreateContainer{CreateContainer: &abi.CreateContainerResponse{Updates: tt.us}}}}
			resp, err := abi.NewClient(ft, abi.KeepGroups()).CreateContainer(context.Background(), &abi.CreateContainerRequest{})
			ae, ok := errors.AsType[*abi.AnswerError](err)
			if resp != nil || !ok || ae.Method != abi.Method_METHOD_CREATE_CONTAINER || ae.Field != tt.field || ae.Message != "empty container id" {
				t.Fatalf("CreateContainer = %v, %v; want an AnswerError naming %s", resp, err, tt.field)
			}
		})
	}
}

// EachContainer walks the list ExpandUpdates builds, without building it:
// the same containers in the same order, each with the group's values.
func TestEachContainerFollowsExpandUpdates(t *testing.T) {
	in := []*abi.ContainerUpdate{
		upd("a", "0-3", ""),
		{ContainerId: "b", CpusetCpus: "4-7", CpusetMems: "1", RdtClass: "gold", AlsoContainerIds: []string{"c", "b"}},
		upd("e", "", "0"),
	}
	want, err := abi.ExpandUpdates(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []*abi.ContainerUpdate
	for id, u := range abi.EachContainer(in) {
		got = append(got, &abi.ContainerUpdate{ContainerId: id, CpusetCpus: u.CpusetCpus, CpusetMems: u.CpusetMems, RdtClass: u.RdtClass, BlockioClass: u.BlockioClass})
	}
	if !sameUpdates(got, want) {
		t.Fatalf("EachContainer = %v, want %v", got, want)
	}
	if n := abi.CountContainers(in); n != len(want) {
		t.Fatalf("CountContainers = %d, want %d", n, len(want))
	}
	var first []string
	for id := range abi.EachContainer(in) {
		first = append(first, id)
		if len(first) == 3 {
			break
		}
	}
	if !slices.Equal(first, []string{"a", "b", "c"}) {
		t.Fatalf("stopped early: %v, want [a b c]", first)
	}
	if allocs := testing.AllocsPerRun(10, func() {
		for range abi.EachContainer(in) {
		}
	}); allocs != 0 {
		t.Fatalf("EachContainer allocated %v times", allocs)
	}
}

func TestCheckGroups(t *testing.T) {
	if err := abi.CheckGroups([]*abi.ContainerUpdate{upd("a", "0", "", "b"), nil}); err != nil {
		t.Fatalf("CheckGroups of a good answer: %v", err)
	}
	err := abi.CheckGroups([]*abi.ContainerUpdate{upd("a", "0", ""), upd("b", "1", "", "c", "")})
	if ae, ok := errors.AsType[*abi.AnswerError](err); !ok || ae.Field != "updates[1].also_container_ids[1]" {
		t.Fatalf("CheckGroups = %v, want updates[1].also_container_ids[1]", err)
	}
}
