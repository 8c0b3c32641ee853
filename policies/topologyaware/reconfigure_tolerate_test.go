package topologyaware_test

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// TestReconfigureKeepsUnpinnedContainers: a container Synchronize adopted
// unpinned (it started without a cpuset, e.g. fail-open) is kept as it is by
// a reconfiguration, as Synchronize keeps it, rather than re-placed: a valid
// reservation change is not refused because it would not fit the new shared
// CPUs (issue 16, fault 4).
func TestReconfigureKeepsUnpinnedContainers(t *testing.T) {
	const base = "availableResources: {cpu: cpuset:0-1}\n"
	h := newHarness(t, "Desktop1Socket", base+"reservedResources: {cpu: cpuset:0}")
	be := bestEffort("unpinned").Request()
	be.Container.Assignment = &abi.ContainerAdjustment{CpusetMems: "0"}
	if _, err := h.Client.Synchronize(context.Background(), &abi.SynchronizeRequest{
		Pods: []*abi.PodSandbox{be.Pod}, Containers: []*abi.Container{be.Container},
	}); err != nil {
		t.Fatal(err)
	}
	h.Create(guaranteed("g", 1000)) // CPU 1: no shared CPU is left
	resp, err := h.Client.Reconfigure(context.Background(), &abi.ReconfigureRequest{
		Config: []byte(base + "reservedResources: {cpu: 500m}"),
	})
	if err != nil {
		t.Fatalf("Reconfigure with an unpinned container and no shared CPUs left: %v", err)
	}
	for _, u := range resp.GetUpdates() {
		if u.GetContainerId() == "unpinned" {
			t.Errorf("the unpinned container was moved: %v", u)
		}
	}
}
