package v1_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func upd(id, cpus, mems string, also ...string) *abi.ContainerUpdate {
	return &abi.ContainerUpdate{ContainerId: id, CpusetCpus: cpus, CpusetMems: mems, AlsoContainerIds: also}
}

func sameUpdates(a, b []*abi.ContainerUpdate) bool {
	return slices.EqualFunc(a, b, func(x, y *abi.ContainerUpdate) bool { return proto.Equal(x, y) })
}

func TestExpandUpdatesInPlace(t *testing.T) {
	in := []*abi.ContainerUpdate{
		upd("a", "0-3", ""),
		{ContainerId: "b", CpusetCpus: "4-7", CpusetMems: "1", RdtClass: "gold", BlockioClass: "slow", AlsoContainerIds: []string{"c", "d"}},
		upd("e", "", "0"),
		upd("f", "8", "", "g"),
	}
	before := make([]*abi.ContainerUpdate, len(in))
	for i, u := range in {
		before[i] = u.CloneVT()
	}
	got, err := abi.ExpandUpdates(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []*abi.ContainerUpdate{
		upd("a", "0-3", ""),
		{ContainerId: "b", CpusetCpus: "4-7", CpusetMems: "1", RdtClass: "gold", BlockioClass: "slow"},
		{ContainerId: "c", CpusetCpus: "4-7", CpusetMems: "1", RdtClass: "gold", BlockioClass: "slow"},
		{ContainerId: "d", CpusetCpus: "4-7", CpusetMems: "1", RdtClass: "gold", BlockioClass: "slow"},
		upd("e", "", "0"),
		upd("f", "8", ""),
		upd("g", "8", ""),
	}
	if !sameUpdates(got, want) {
		t.Fatalf("ExpandUpdates = %v, want %v", got, want)
	}
	if !sameUpdates(in, before) {
		t.Fatalf("ExpandUpdates changed its input: %v, was %v", in, before)
	}
}

func TestExpandUpdatesWithoutGroupsReturnsInput(t *testing.T) {
	in := []*abi.ContainerUpdate{upd("a", "0", ""), upd("b", "1", "")}
	got, err := abi.ExpandUpdates(in)
	if err != nil || &got[0] != &in[0] {
		t.Fatalf("ExpandUpdates = %p, %v; want the input slice %p", got, err, in)
	}
	if allocs := testing.AllocsPerRun(10, func() { _, _ = abi.ExpandUpdates(in) }); allocs != 0 {
		t.Fatalf("ExpandUpdates without groups allocated %v times", allocs)
	}
}

func TestExpandUpdatesRefusesEmptyIDs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		in    []*abi.ContainerUpdate
		field string
	}{
		{"in the second update", []*abi.ContainerUpdate{upd("a", "0", ""), upd("b", "1", "", "c", "")}, "updates[1].also_container_ids[1]"},
		{"first of the group", []*abi.ContainerUpdate{upd("a", "0", "", "", "b")}, "updates[0].also_container_ids[0]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := abi.ExpandUpdates(tt.in)
			var ae *abi.AnswerError
			if !errors.As(err, &ae) || ae.Field != tt.field || ae.Message != "empty container id" {
				t.Fatalf("ExpandUpdates error = %v, want field %s: empty container id", err, tt.field)
			}
		})
	}
}

// An id may repeat, in a group or across updates: every update applies in
// order, as plain updates always did.
func TestExpandUpdatesKeepsRepeats(t *testing.T) {
	got, err := abi.ExpandUpdates([]*abi.ContainerUpdate{upd("a", "0", "", "b", "a"), upd("b", "1", "")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []*abi.ContainerUpdate{upd("a", "0", ""), upd("b", "0", ""), upd("a", "0", ""), upd("b", "1", "")}; !sameUpdates(got, want) {
		t.Fatalf("ExpandUpdates = %v, want %v", got, want)
	}
}

func TestFoldUpdates(t *testing.T) {
	list := strings.Repeat("0-1,", 100) + "2" // one shared string, as a policy keeps it
	copyOf := strings.Clone(list)             // equal bytes, another string
	for _, tt := range []struct {
		name string
		in   []*abi.ContainerUpdate
		want []*abi.ContainerUpdate
	}{
		{"empty", nil, nil},
		{"one", []*abi.ContainerUpdate{upd("a", "0", "")}, []*abi.ContainerUpdate{upd("a", "0", "")}},
		{"runs", []*abi.ContainerUpdate{
			upd("a", list, "0"), upd("b", list, "0"), upd("c", copyOf, "0"),
			upd("d", list, "1"), upd("e", "3", ""), upd("f", "3", ""),
		}, []*abi.ContainerUpdate{upd("a", list, "0", "b", "c"), upd("d", list, "1"), upd("e", "3", "", "f")}},
		{"repeated ids stay in the run", []*abi.ContainerUpdate{upd("a", "0", ""), upd("b", "0", ""), upd("a", "0", ""), upd("c", "0", "")},
			[]*abi.ContainerUpdate{upd("a", "0", "", "b", "a", "c")}},
		{"groups and empty ids are kept", []*abi.ContainerUpdate{upd("a", "0", "", "b"), upd("c", "0", ""), upd("", "0", ""), upd("d", "0", "")},
			[]*abi.ContainerUpdate{upd("a", "0", "", "b"), upd("c", "0", ""), upd("", "0", ""), upd("d", "0", "")}},
		{"other fields", []*abi.ContainerUpdate{{ContainerId: "a", RdtClass: "x"}, {ContainerId: "b", RdtClass: "y"}, {ContainerId: "c", RdtClass: "y", BlockioClass: "z"}},
			[]*abi.ContainerUpdate{{ContainerId: "a", RdtClass: "x"}, {ContainerId: "b", RdtClass: "y"}, {ContainerId: "c", RdtClass: "y", BlockioClass: "z"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.in)
			got := abi.FoldUpdates(tt.in)
			if !sameUpdates(got, tt.want) {
				t.Fatalf("FoldUpdates = %v, want %v", got, tt.want)
			}
			for i, u := range tt.in {
				if u != before[i] || (u != nil && len(u.AlsoContainerIds) != len(before[i].AlsoContainerIds)) {
					t.Fatalf("FoldUpdates changed its input at %d", i)
				}
			}
			back, err := abi.ExpandUpdates(got)
			if err != nil {
				t.Fatal(err)
			}
			// Expanding gives back the input (without the groups it had, which expand too).
			want, _ := abi.ExpandUpdates(tt.in)
			if !sameUpdates(back, want) {
				t.Fatalf("ExpandUpdates(FoldUpdates(x)) = %v, want %v", back, want)
			}
		})
	}
}

func TestClientExpandsGroupedUpdates(t *testing.T) {
	ft := &fakeTransport{resp: &abi.Response{Result: &abi.Response_RemoveContainer{RemoveContainer: &abi.RemoveContainerResponse{
		Updates: []*abi.ContainerUpdate{upd("a", "0-3", "0", "b", "c"), upd("d", "4", "")},
	}}}}
	got, err := abi.NewClient(ft).RemoveContainer(context.Background(), &abi.RemoveContainerRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []*abi.ContainerUpdate{upd("a", "0-3", "0"), upd("b", "0-3", "0"), upd("c", "0-3", "0"), upd("d", "4", "")}
	if !sameUpdates(got.GetUpdates(), want) {
		t.Fatalf("updates = %v, want %v", got.GetUpdates(), want)
	}
}

func TestClientRefusesBadGroup(t *testing.T) {
	ft := &fakeTransport{resp: &abi.Response{Result: &abi.Response_CreateContainer{CreateContainer: &abi.CreateContainerResponse{
		Updates: []*abi.ContainerUpdate{upd("a", "0", "", "")},
	}}}}
	resp, err := abi.NewClient(ft).CreateContainer(context.Background(), &abi.CreateContainerRequest{})
	var ae *abi.AnswerError
	if resp != nil || !errors.As(err, &ae) || ae.Method != abi.Method_METHOD_CREATE_CONTAINER || ae.Field != "updates[0].also_container_ids[0]" {
		t.Fatalf("CreateContainer = %v, %v; want an AnswerError naming updates[0].also_container_ids[0]", resp, err)
	}
	if got := err.Error(); got != "CreateContainer: updates[0].also_container_ids[0]: empty container id" {
		t.Fatalf("error text = %q", got)
	}
}

// Every response with updates is expanded, through UpdatesField.
func TestUpdatesFieldCoversEveryAnswerWithUpdates(t *testing.T) {
	withUpdates := 0
	for _, cc := range clientCalls() {
		us := cc.good.UpdatesField()
		if us == nil {
			continue
		}
		withUpdates++
		*us = []*abi.ContainerUpdate{upd("a", "0", "", "b")}
		ft := &fakeTransport{resp: cc.good}
		if _, _, err := cc.call(context.Background(), abi.NewClient(ft)); err != nil {
			t.Fatalf("%s: %v", cc.method.Short(), err)
		}
		if got := fmt.Sprint(*cc.good.UpdatesField()); !strings.Contains(got, `container_id:"b"`) || strings.Contains(got, "also_container_ids") {
			t.Fatalf("%s: updates after the call = %s, want the group expanded", cc.method.Short(), got)
		}
	}
	if withUpdates != 11 {
		t.Fatalf("%d responses carry updates, want 11", withUpdates)
	}
}

func TestClientInitAnnouncesItsMinor(t *testing.T) {
	ft := &fakeTransport{resp: &abi.Response{Result: &abi.Response_Init{Init: &abi.InitResponse{}}}}
	req := &abi.InitRequest{}
	if _, err := abi.NewClient(ft).Init(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := ft.request.(*abi.InitRequest).GetHostAbiMinor(); got != abi.ABIMinor || abi.ABIMinor < abi.MinorGroupedUpdates {
		t.Fatalf("Init sent host_abi_minor %d, want %d (>= %d)", got, abi.ABIMinor, abi.MinorGroupedUpdates)
	}
}

func TestChangedUpdate(t *testing.T) {
	for _, tc := range []struct {
		oldC, newC, oldM, newM string
		want                   *abi.ContainerUpdate
	}{
		{"0-3", "0-3", "0", "0", nil},
		{"0-3", "", "0", "", nil}, // unpinned: nothing to send
		{"0-3", "4-7", "0", "0", &abi.ContainerUpdate{ContainerId: "c", CpusetCpus: "4-7"}},
		{"0-3", "0-3", "0", "1", &abi.ContainerUpdate{ContainerId: "c", CpusetMems: "1"}},
		{"", "2", "", "0", &abi.ContainerUpdate{ContainerId: "c", CpusetCpus: "2", CpusetMems: "0"}},
	} {
		got := abi.ChangedUpdate("c", tc.oldC, tc.newC, tc.oldM, tc.newM)
		if !got.EqualVT(tc.want) {
			t.Errorf("%q→%q, %q→%q: %v, want %v", tc.oldC, tc.newC, tc.oldM, tc.newM, got, tc.want)
		}
	}
}
