package topologyaware_test

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const (
	annAffinity     = "resource-policy.nri.io/affinity"
	annAntiAffinity = "resource-policy.nri.io/anti-affinity"
	affinityMachine = "Server2Socket4NodesInterleaved"
)

// poolOf is where a container runs: its cpuset and memory nodes.
func (h *harness) poolOf(id string) [2]string {
	a := h.ctrs[id].GetAssignment()
	return [2]string{a.GetCpusetCpus(), a.GetCpusetMems()}
}

// limitedShared is a Burstable container with a CPU limit: it goes to the
// NUMA node with the fewest containers.
func limitedShared(id string) spec { return burstable(id, 100).limited(200) }

// TestAffinityAnnotations: a pod's affinity annotation pulls a container to
// the pool of the containers it names, anti-affinity pushes it away, where
// without them the fewest-containers rule places it elsewhere (or there).
func TestAffinityAnnotations(t *testing.T) { nativeAndWasm(t, affinityScenario) }

func affinityScenario(t *testing.T, open opener) {
	h := mustOpen(t, open, affinityMachine, "")
	h.create(limitedShared("a").of("web", "front"))
	// Without affinity the next container goes to another, emptier node.
	h.create(limitedShared("free").of("other", "x"))
	if h.poolOf("free") == h.poolOf("a") {
		t.Fatalf("free joined a in %v: the scenario needs the default to spread", h.poolOf("a"))
	}
	// "front: [back]" is symmetric: back has affinity to front.
	h.create(limitedShared("b").of("web", "back").with(annAffinity, "front: [back]"))
	if h.poolOf("b") != h.poolOf("a") {
		t.Errorf("b with affinity to front (a, in %v) went to %v", h.poolOf("a"), h.poolOf("b"))
	}
	h.check()

	// Fill every node to the same count: the fewest-containers rule then
	// takes the lowest id again, which is a's node unless pushed away.
	h2 := mustOpen(t, open, affinityMachine, "")
	ids := []string{"n0", "n1", "n2", "n3"}
	for _, id := range ids {
		h2.create(limitedShared(id).of("fill-"+id, "x"))
	}
	h2.create(limitedShared("plain").of("lone", "x"))
	target := ""
	for _, id := range ids {
		if h2.poolOf(id) == h2.poolOf("plain") {
			target = id
		}
	}
	if target == "" {
		t.Fatalf("plain (%v) joined no filler", h2.poolOf("plain"))
	}
	h2.remove("plain")
	h2.create(limitedShared("away").of("fill-"+target, "side").with(annAntiAffinity, "side: [x]"))
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
		{"colocatePods: true\n", limitedShared("a").of("web", "front"), limitedShared("b").of("web", "back"), limitedShared("c").of("db", "x")},
		{"colocateNamespaces: true\n", limitedShared("a").in("ns1"), limitedShared("b").in("ns1"), limitedShared("c").in("ns2")},
	} {
		for _, on := range []bool{false, true} {
			config := ""
			if on {
				config = tc.config
			}
			h := mustOpen(t, open, affinityMachine, config)
			h.create(tc.a)
			h.create(tc.b)
			h.create(tc.away)
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
	h.create(limitedShared("db").of("db", "x").in("data"))
	// The same match without a scope looks in the pod "web" only: no
	// affinity, so the fewest-containers rule spreads it.
	h.create(limitedShared("solo").of("web", "solo").with(annAffinity, "solo: [{match: {key: name, operator: Equals, values: [x]}}]"))
	if h.poolOf("solo") == h.poolOf("db") {
		t.Errorf("solo, with affinity scoped to its own pod, joined db in %v", h.poolOf("db"))
	}
	h.create(limitedShared("app").of("web", "app").with(annAffinity,
		"app: [{scope: {key: namespace, operator: Equals, values: [data]}, match: {key: name, operator: In, values: [x, y]}, weight: 5}]"))
	if h.poolOf("app") != h.poolOf("db") {
		t.Errorf("app, with affinity to db's container x (in %v), went to %v", h.poolOf("db"), h.poolOf("app"))
	}
	h.check()
	_, err := h.tryCreate(limitedShared("bad").of("web", "bad").with(annAffinity, "bad: [{match: {key: name, operator: Near}}]"))
	wantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "pod.annotations[resource-policy.nri.io/affinity]")
}
