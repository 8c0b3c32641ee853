package topologyaware_test

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

const (
	annAffinity     = "resource-policy.nri.io/affinity"
	annAntiAffinity = "resource-policy.nri.io/anti-affinity"
	affinityMachine = "Server2Socket4NodesInterleaved"
)

// poolOf is where a container runs: its cpuset and memory nodes.
func (h *harness) poolOf(id string) [2]string {
	a := h.Containers[id].GetAssignment()
	return [2]string{a.GetCpusetCpus(), a.GetCpusetMems()}
}

// limitedShared is a Burstable container with a CPU limit: it goes to the
// NUMA node with the fewest containers.
func limitedShared(id string) spec { return burstable(id, 100).Limited(200) }

// TestAffinityAnnotations: a pod's affinity annotation pulls a container to
// the pool of the containers it names, anti-affinity pushes it away, where
// without them the fewest-containers rule places it elsewhere (or there).
func TestAffinityAnnotations(t *testing.T) { nativeAndWasm(t, affinityScenario) }

func affinityScenario(t *testing.T, open opener) {
	h := mustOpen(t, open, affinityMachine, "")
	h.Create(limitedShared("a").OfPod("web").Named("front"))
	// Without affinity the next container goes to another, emptier node.
	h.Create(limitedShared("free").OfPod("other").Named("x"))
	if h.poolOf("free") == h.poolOf("a") {
		t.Fatalf("free joined a in %v: the scenario needs the default to spread", h.poolOf("a"))
	}
	// "front: [back]" is symmetric: back has affinity to front.
	h.Create(limitedShared("b").OfPod("web").Named("back").With(annAffinity, "front: [back]"))
	if h.poolOf("b") != h.poolOf("a") {
		t.Errorf("b with affinity to front (a, in %v) went to %v", h.poolOf("a"), h.poolOf("b"))
	}
	h.check()

	// Fill every node to the same count: the fewest-containers rule then
	// takes the lowest id again, which is a's node unless pushed away.
	h2 := mustOpen(t, open, affinityMachine, "")
	ids := []string{"n0", "n1", "n2", "n3"}
	for _, id := range ids {
		h2.Create(limitedShared(id).OfPod("fill-" + id).Named("x"))
	}
	h2.Create(limitedShared("plain").OfPod("lone").Named("x"))
	target := ""
	for _, id := range ids {
		if h2.poolOf(id) == h2.poolOf("plain") {
			target = id
		}
	}
	if target == "" {
		t.Fatalf("plain (%v) joined no filler", h2.poolOf("plain"))
	}
	h2.Remove("plain")
	h2.Create(limitedShared("away").OfPod("fill-"+target).Named("side").With(annAntiAffinity, "side: [x]"))
	if h2.poolOf("away") == h2.poolOf(target) {
		t.Errorf("away, with anti-affinity to %s, joined it in %v", target, h2.poolOf(target))
	}
	h2.check()
}

// TestColocate: colocatePods and colocateNamespaces give containers without
// affinity annotations an affinity to their pod's or namespace's others.
func TestColocate(t *testing.T) { nativeAndWasm(t, colocateScenario) }

func colocateScenario(t *testing.T, open opener) {
	for _, tc := range []struct {
		config     string
		a, b, away spec
	}{
		{"colocatePods: true\n", limitedShared("a").OfPod("web").Named("front"), limitedShared("b").OfPod("web").Named("back"), limitedShared("c").OfPod("db").Named("x")},
		{"colocateNamespaces: true\n", limitedShared("a").In("ns1"), limitedShared("b").In("ns1"), limitedShared("c").In("ns2")},
	} {
		for _, on := range []bool{false, true} {
			config := ""
			if on {
				config = tc.config
			}
			h := mustOpen(t, open, affinityMachine, config)
			h.Create(tc.a)
			h.Create(tc.b)
			h.Create(tc.away)
			if together := h.poolOf("a") == h.poolOf("b"); together != on {
				t.Errorf("%q: a in %v, b in %v: together %v, want %v", config, h.poolOf("a"), h.poolOf("b"), together, on)
			}
			if h.poolOf("c") == h.poolOf("a") {
				t.Errorf("%q: c, of another pod and namespace, joined a in %v", config, h.poolOf("a"))
			}
			h.check()
		}
	}
}

// TestAffinityFullForm: the annotations' full form, scope and match
// expressions with a weight: scope defaults to the pod, and a malformed
// expression refuses the container, naming the annotation.
func TestAffinityFullForm(t *testing.T) { nativeAndWasm(t, affinityFullFormScenario) }

func affinityFullFormScenario(t *testing.T, open opener) {
	h := mustOpen(t, open, affinityMachine, "")
	h.Create(limitedShared("db").OfPod("db").Named("x").In("data"))
	// The same match without a scope looks in the pod "web" only: no
	// affinity, so the fewest-containers rule spreads it.
	h.Create(limitedShared("solo").OfPod("web").Named("solo").With(annAffinity, "solo: [{match: {key: name, operator: Equals, values: [x]}}]"))
	if h.poolOf("solo") == h.poolOf("db") {
		t.Errorf("solo, with affinity scoped to its own pod, joined db in %v", h.poolOf("db"))
	}
	h.Create(limitedShared("app").OfPod("web").Named("app").With(annAffinity,
		"app: [{scope: {key: namespace, operator: Equals, values: [data]}, match: {key: name, operator: In, values: [x, y]}, weight: 5}]"))
	if h.poolOf("app") != h.poolOf("db") {
		t.Errorf("app, with affinity to db's container x (in %v), went to %v", h.poolOf("db"), h.poolOf("app"))
	}
	h.check()
	_, err := h.TryCreate(limitedShared("bad").OfPod("web").Named("bad").With(annAffinity, "bad: [{match: {key: name, operator: Near}}]"))
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "pod.annotations[resource-policy.nri.io/affinity]")
}
