package topologyaware_test

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
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
	iso := policytest.MustSet(t, pmemIsolated)
	isolated := func(id string, resp *abi.CreateContainerResponse, want bool) {
		t.Helper()
		got := policytest.MustSet(t, resp.Adjustment.CpusetCpus)
		if got.IsSubsetOf(iso) != want || got.Intersection(iso).IsEmpty() == want {
			t.Errorf("%s: cpus %s, want isolated %v (isolated: %s)", id, got, want, iso)
		}
	}
	isolated("r2", h.Create(guaranteed("r2", 2000).With(annRequireIsolated, "true")), true)
	isolated("r1", h.Create(guaranteed("r1", 1000).With(annRequireIsolated, "true")), true)
	h.check()
	// One isolated CPU is left: two are refused, not given other CPUs.
	_, err := h.TryCreate(guaranteed("r2b", 2000).With(annRequireIsolated, "true"))
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldCPURequest)
	// prefer-isolated-cpus at the container's scope outranks
	// require-isolated-cpus at the pod's: preferred, so other CPUs do.
	isolated("p2", h.Create(guaranteed("p2", 2000).With(annRequireIsolated, "true").With(annPreferIsolated, "true")), false)
	// At the same scope require-isolated-cpus wins.
	_, err = h.TryCreate(guaranteed("r2c", 2000).With(annRequireIsolated, "true").With(annPreferIsolatedPod, "true"))
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, fieldCPURequest)
	// require-isolated-cpus: false is no isolation at all.
	isolated("n1", h.Create(guaranteed("n1", 1000).With(annRequireIsolated, "false")), false)
	isolated("r1b", h.Create(guaranteed("r1b", 1000).With(annRequireIsolated, "true")), true)
	h.Remove("r2")
	isolated("r2d", h.Create(guaranteed("r2d", 2000).With(annRequireIsolated, "true")), true)
	h.check()
}
