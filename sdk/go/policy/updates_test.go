// The host's codec only, as dispatch_test.go whose test policy it uses.

//go:build !wasip1

package policy_test

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func update(id, cpus string, also ...string) *abi.ContainerUpdate {
	return &abi.ContainerUpdate{ContainerId: id, CpusetCpus: cpus, AlsoContainerIds: also}
}

// The policy answers two plain updates with one same change and a group it
// built itself; what goes on the wire depends on the host's Init.
func TestDispatchShapesUpdatesForTheHost(t *testing.T) {
	answer := func() *abi.CreateContainerResponse {
		return &abi.CreateContainerResponse{Updates: []*abi.ContainerUpdate{
			update("a", "0-3"), update("b", "0-3"), update("c", "4", "d"),
		}}
	}
	for _, tt := range []struct {
		name  string
		minor uint32
		want  []*abi.ContainerUpdate
	}{
		{"v1.0 host: every group expanded", 0, []*abi.ContainerUpdate{update("a", "0-3"), update("b", "0-3"), update("c", "4"), update("d", "4")}},
		{"v1.1 host: runs folded", 1, []*abi.ContainerUpdate{update("a", "0-3", "b"), update("c", "4", "d")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPolicy()
			d := newDispatcher(t, p)
			if resp := d.Dispatch(abi.Method_METHOD_INIT, encode(t, &abi.InitRequest{HostAbiMinor: tt.minor})); resp.GetInit() == nil {
				t.Fatalf("Init = %v", resp)
			}
			if d.HostABIMinor() != tt.minor {
				t.Fatalf("HostABIMinor = %d, want %d", d.HostABIMinor(), tt.minor)
			}
			p.createResp = answer()
			got := d.Dispatch(abi.Method_METHOD_CREATE_CONTAINER, encode(t, &abi.CreateContainerRequest{})).GetCreateContainer().GetUpdates()
			if !slices.EqualFunc(got, tt.want, func(x, y *abi.ContainerUpdate) bool { return proto.Equal(x, y) }) {
				t.Fatalf("updates = %v, want %v", got, tt.want)
			}
		})
	}
}

// A bad group the policy built cannot reach an old host: the answer becomes
// an internal error naming the field.
func TestDispatchRefusesABadGroupForAnOldHost(t *testing.T) {
	p := newTestPolicy()
	d := newDispatcher(t, p)
	initialize(t, d)
	p.createResp = &abi.CreateContainerResponse{Updates: []*abi.ContainerUpdate{update("a", "0", "b", "")}}
	resp := d.Dispatch(abi.Method_METHOD_CREATE_CONTAINER, encode(t, &abi.CreateContainerRequest{}))
	wantError(t, resp, abi.ErrorCode_ERROR_CODE_INTERNAL, "updates[0].also_container_ids[1]", "empty container id")
}

// A policy without Init still learns the host's minor.
func TestDispatchRecordsHostMinorWithoutInitializer(t *testing.T) {
	d := newDispatcher(t, bare{})
	if resp := d.Dispatch(abi.Method_METHOD_INIT, encode(t, &abi.InitRequest{HostAbiMinor: 1})); resp.GetInit() == nil {
		t.Fatalf("Init = %v", resp)
	}
	if d.HostABIMinor() != 1 {
		t.Fatalf("HostABIMinor = %d, want 1", d.HostABIMinor())
	}
	if slices.Contains(d.Metadata().Capabilities, abi.Method_METHOD_INIT) {
		t.Fatal("Init listed as a capability of a policy without Init")
	}
}
