package topologyaware_test

import (
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// TestHideHyperthreads: a container annotated hide-hyperthreads runs on one
// thread of each core of its grant, exclusive or shared (nri-plugins:
// setPreferredCpusetCpus); its grant itself is unchanged.
func TestHideHyperthreads(t *testing.T) {
	const key = "hide-hyperthreads.resource-policy.nri.io/pod"
	h := newHarness(t, "Desktop1Socket", "") // cpuN and cpuN+8 are siblings
	h.create(guaranteed("g", 4000).with(key, "true"))
	if got := h.ctrs["g"].GetAssignment().GetCpusetCpus(); got != "1-2" {
		t.Errorf("exclusive with hidden hyperthreads: cpus %s, want 1-2 (cores 1 and 2 of grant 1-2,9-10)", got)
	}
	h.create(bestEffort("be").with(key, "true"))
	if got := h.ctrs["be"].GetAssignment().GetCpusetCpus(); got != "3-8" {
		t.Errorf("shared with hidden hyperthreads: cpus %s, want 3-8 (one thread of each core of 3-8,11-15)", got)
	}
	h.create(bestEffort("plain"))
	if got := h.ctrs["plain"].GetAssignment().GetCpusetCpus(); got != "3-8,11-15" {
		t.Errorf("shared: cpus %s, want 3-8,11-15", got)
	}
}

// TestUnimplementedAnnotationsWarn: an annotation the policy recognises but
// does not implement is named in a warning.
func TestUnimplementedAnnotationsWarn(t *testing.T) {
	log := captureWarnings(t)
	h := newHarness(t, "Desktop1Socket", "")
	h.create(guaranteed("g", 1000).with("scheduling-class.resource-policy.nri.io/container.c", "idle").
		with("cold-start.resource-policy.nri.io/pod", "x"))
	for _, want := range []string{"container g: annotation scheduling-class.resource-policy.nri.io=", "ignored: scheduling classes are not applied", "container g: annotation cold-start.resource-policy.nri.io=", "ignored: cold start (PMEM) is not implemented"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// TestTwoCPUNode: with 750m reserved a 2-CPU node has one shared CPU; a
// Guaranteed 1-CPU container takes it. As in nri-plugins, a BestEffort
// container then starts unpinned, a Burstable one that requests CPU is
// refused, and once the exclusive CPU comes back the BestEffort container
// is pinned to it.
func TestTwoCPUNode(t *testing.T) {
	h := newHarness(t, "TwoCPU", "")
	h.create(guaranteed("g", 1000))
	if got := h.ctrs["g"].GetAssignment().GetCpusetCpus(); got != "1" {
		t.Fatalf("g: cpus %s, want 1", got)
	}
	h.create(bestEffort("be"))
	if got := h.ctrs["be"].GetAssignment().GetCpusetCpus(); got != "" {
		t.Errorf("be: cpus %q, want none (unpinned)", got)
	}
	_, err := h.tryCreate(burstable("bu", 100))
	wantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources.cpu_request_milli")
	h.remove("g")
	if got := h.ctrs["be"].GetAssignment().GetCpusetCpus(); got != "1" {
		t.Errorf("be after g left: cpus %q, want 1", got)
	}
}
