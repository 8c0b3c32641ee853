package topologyaware_test

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestSynchronize: containers the runtime no longer runs are forgotten,
// unknown ones with an assignment adopted as they are, unknown ones without
// one placed and told by an update; shared containers hear of the changes.
func TestSynchronize(t *testing.T) {
	h := newHarness(t, "Desktop1Socket", "")
	h.Create(burstable("a", 500))
	h.Create(guaranteed("x", 2000)) // 1,9
	h.Create(guaranteed("gone", 2000))

	adopt := guaranteed("adopt", 1000).Request()
	adopt.Container.Assignment = &abi.ContainerAdjustment{CpusetCpus: "5", CpusetMems: "0"}
	fresh := bestEffort("fresh").Request()
	stopped := bestEffort("stopped").Request()
	stopped.Container.State = abi.ContainerState_CONTAINER_STATE_STOPPED
	req := &abi.SynchronizeRequest{
		Pods:       []*abi.PodSandbox{h.Pods["pod-a"], h.Pods["pod-x"], adopt.Pod, fresh.Pod, stopped.Pod},
		Containers: []*abi.Container{h.Containers["x"], fresh.Container, adopt.Container, h.Containers["a"], stopped.Container},
	}
	resp, err := h.Client.Synchronize(context.Background(), req)
	if err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	delete(h.Containers, "gone")
	h.Pods[adopt.Pod.Id], h.Containers["adopt"] = adopt.Pod, adopt.Container
	h.Pods[fresh.Pod.Id], h.Containers["fresh"] = fresh.Pod, fresh.Container
	fresh.Container.Assignment = &abi.ContainerAdjustment{}
	want := []*abi.ContainerUpdate{
		{ContainerId: "a", CpusetCpus: "2-4,6-8,10-15"},
		{ContainerId: "fresh", CpusetCpus: "2-4,6-8,10-15", CpusetMems: "0"},
	}
	if !equalUpdates(resp.Updates, want) {
		t.Errorf("updates %v, want %v", resp.Updates, want)
	}
	h.Apply(resp.Updates)
	h.check()
}

// TestReconfigure: a new reservation moves the reserved and shared
// containers (with updates) and leaves exclusive grants alone; one that
// would take an exclusive grant's CPUs is refused naming the field.
func TestReconfigure(t *testing.T) {
	h := newHarness(t, "Desktop1Socket", "")
	h.Create(system("ks", 100))
	h.Create(burstable("a", 500))
	h.Create(guaranteed("x", 2000)) // 1,9
	reconfigure := func(config string) ([]*abi.ContainerUpdate, error) {
		resp, err := h.Client.Reconfigure(context.Background(), &abi.ReconfigureRequest{Config: []byte(config)})
		if err != nil {
			return nil, err
		}
		h.Config = config
		h.Apply(resp.Updates)
		return resp.Updates, nil
	}

	updates, err := reconfigure("reservedResources: {cpu: cpuset:2-3}")
	if err != nil {
		t.Fatal(err)
	}
	want := []*abi.ContainerUpdate{{ContainerId: "a", CpusetCpus: "0,4-8,10-15"}, {ContainerId: "ks", CpusetCpus: "2-3"}}
	if !equalUpdates(updates, want) {
		t.Errorf("updates %v, want %v", updates, want)
	}
	h.check()

	_, err = reconfigure("reservedResources: {cpu: cpuset:9}")
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "config.reservedResources.cpu")
	_, err = reconfigure("availableResources: {cpu: cpuset:2-8}\nreservedResources: {cpu: cpuset:2}")
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "config.availableResources.cpu")

	updates, err = reconfigure("reservedResources: {cpu: cpuset:2-3}\nreservedPoolNamespaces: [def*]")
	if err != nil {
		t.Fatal(err)
	}
	want = []*abi.ContainerUpdate{{ContainerId: "a", CpusetCpus: "2-3"}}
	if !equalUpdates(updates, want) {
		t.Errorf("updates %v, want %v", updates, want)
	}
	h.check("default")
}

// TestStopAndUnknown: StopContainer frees at once; stopping or removing an
// unknown container is a no-op; a repeated create answers the same.
func TestStopAndUnknown(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, "Desktop1Socket", "")
	h.Create(bestEffort("b"))
	first := h.Create(guaranteed("x", 2000))
	again, err := h.Client.CreateContainer(ctx, guaranteed("x", 2000).Request())
	if err != nil || again.Adjustment.CpusetCpus != first.Adjustment.CpusetCpus || len(again.Updates) != 0 {
		t.Errorf("repeated create: %v, %v", again, err)
	}
	resp, err := h.Client.StopContainer(ctx, &abi.StopContainerRequest{Container: h.Containers["x"]})
	if err != nil || len(resp.Updates) != 1 || resp.Updates[0].CpusetCpus != "1-15" {
		t.Fatalf("StopContainer: %v, %v", resp, err)
	}
	h.Apply(resp.Updates)
	delete(h.Containers, "x")
	h.check()
	for _, id := range []string{"x", "never"} {
		if r, err := h.Client.RemoveContainer(ctx, &abi.RemoveContainerRequest{Container: &abi.Container{Id: id}}); err != nil || len(r.Updates) != 0 {
			t.Errorf("RemoveContainer(%s): %v, %v", id, r, err)
		}
	}
	if _, err := h.Client.CreateContainer(ctx, &abi.CreateContainerRequest{Container: &abi.Container{}}); err == nil {
		t.Errorf("a container without an id was placed")
	}
}

// TestDeterminism: the same calls give byte-identical answers and dumps.
func TestDeterminism(t *testing.T) {
	for _, m := range machines {
		t.Run(m, func(t *testing.T) {
			var dumps [2]string
			for i := range dumps {
				h := newHarness(t, m, "reservedPoolNamespaces: [monitoring]")
				mixed(t, h)
				dumps[i] = string(h.dumpRaw())
			}
			if dumps[0] != dumps[1] {
				t.Errorf("two runs dumped different states:\n%s\n---\n%s", dumps[0], dumps[1])
			}
		})
	}
}
