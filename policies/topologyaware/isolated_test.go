package topologyaware_test

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const (
	annRequireIsolated   = "require-isolated-cpus.resource-policy.nri.io/pod"
	annPreferIsolatedPod = "prefer-isolated-cpus.resource-policy.nri.io/pod"
	pmemIsolated         = "2-3,58-59" // PMEM112CPUIsolated's isolcpus
	fieldCPURequest      = "container.resources.cpu_request_milli"
)

// TestRequireIsolatedCPUs: require-isolated-cpus takes isolated CPUs or
// refuses the container, where prefer-isolated-cpus falls back to others;
// of the two, the annotation at the more specific scope decides.
func TestRequireIsolatedCPUs(t *testing.T) { nativeAndWasm(t, requireIsolatedScenario) }

func requireIsolatedScenario(t *testing.T, open opener) {
	h := mustOpen(t, open, "PMEM112CPUIsolated", "")
	iso := mustSet(t, pmemIsolated)
	isolated := func(id string, resp *abi.CreateContainerResponse, want bool) {
		t.Helper()
		got := mustSet(t, resp.Adjustment.CpusetCpus)
		if got.IsSubsetOf(iso) != want || got.Intersection(iso).IsEmpty() == want {
			t.Errorf("%s: cpus %s, want isolated %v (isolated: %s)", id, got, want, iso)
		}
	}
	isolated("r2", h.create(guaranteed("r2", 2000).with(annRequireIsolated, "true")), true)
	isolated("r1", h.create(guaranteed("r1", 1000).with(annRequireIsolated, "true")), true)
	h.check()
	// One isolated CPU is left: two are refused, not given other CPUs.
	_, err := h.tryCreate(guaranteed("r2b", 2000).with(annRequireIsolated, "true"))
	wantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldCPURequest)
	// prefer-isolated-cpus at the container's scope outranks
	// require-isolated-cpus at the pod's: preferred, so other CPUs do.
	isolated("p2", h.create(guaranteed("p2", 2000).with(annRequireIsolated, "true").with(annPreferIsolated, "true")), false)
	// At the same scope require-isolated-cpus wins.
	_, err = h.tryCreate(guaranteed("r2c", 2000).with(annRequireIsolated, "true").with(annPreferIsolatedPod, "true"))
	wantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldCPURequest)
	// require-isolated-cpus: false is no isolation at all.
	isolated("n1", h.create(guaranteed("n1", 1000).with(annRequireIsolated, "false")), false)
	isolated("r1b", h.create(guaranteed("r1b", 1000).with(annRequireIsolated, "true")), true)
	h.remove("r2")
	isolated("r2d", h.create(guaranteed("r2d", 2000).with(annRequireIsolated, "true")), true)
	h.check()
}
