package topologyaware_test

import (
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const annStrictHints = "strict.topologyhints.resource-policy.nri.io"

// onNode is the hint the host resolves for a device on a NUMA node of N4C16
// (4 nodes of 4 CPUs: node n holds CPUs 4n to 4n+3).
func onNode(numas string) *abi.TopologyHint {
	return &abi.TopologyHint{Provider: "/sys/devices/pci0000:00/node" + numas, Numas: numas}
}

// TestTopologyHints: on N4C16 with 750m reserved, containers with devices
// and mounts on a NUMA node go there; a strict hint that the node can no
// longer honour refuses the container. The expected placements are
// nri-plugins' (its topology-aware policy run on the same tree with the same
// hints: docs/fidelity.md, "topology hints").
func TestTopologyHints(t *testing.T) { nativeAndWasm(t, topologyHintsScenario) }

func topologyHintsScenario(t *testing.T, open opener) {
	h := mustOpen(t, open, "N4C16", "")
	for _, tc := range []struct {
		s    spec
		cpus string // want
		mems string
	}{
		// Shared, a mount on node 2.
		{burstable("a", 500).WithMount("/var/lib/data", "/data", []string{"rbind", "rw"}, onNode("2")), "8-11", "2"},
		// Exclusive, a device on node 1.
		{guaranteed("b", 2000).WithDevice("/dev/nvme1n1", false, onNode("1")), "4-5", "1"},
		// A hint of CPUs only (local_cpulist without numa_node): the
		// pool holding them.
		{guaranteed("c", 1000).WithDevice("/dev/nvme2n1", false, &abi.TopologyHint{Provider: "/sys/devices/x", Cpus: "0-1"}), "1", "0"},
		// Strict and aligned: placed.
		{burstable("d", 200).Limited(400).WithDevice("/dev/nvme3n1", false, onNode("3")).With(annStrictHints, "true"), "12-15", "3"},
		// Strict, node 1 has room for one more CPU.
		{guaranteed("f", 1000).WithDevice("/dev/nvme1n1", false, onNode("1")).With(annStrictHints, "true"), "6", "1"},
	} {
		h.Create(tc.s)
		if got := h.poolOf(tc.s.ID); got != [2]string{tc.cpus, tc.mems} {
			t.Errorf("%s: cpus %s mems %s, want %s, %s", tc.s.ID, got[0], got[1], tc.cpus, tc.mems)
		}
	}
	// Node 1 has 1 CPU left: 3 exclusive CPUs go elsewhere, which a strict
	// hint refuses.
	_, err := h.TryCreate(guaranteed("e", 3000).WithDevice("/dev/nvme1n1", false, onNode("1")).With(annStrictHints, "true"))
	if err == nil || !strings.Contains(err.Error(), annStrictHints) {
		t.Errorf("strict hint on a full node: err %v, want a refusal naming %s", err, annStrictHints)
	}
	h.check()
}

// TestTopologyHintsIgnored: read-only mounts and devices, the ignored paths
// and the topologyhints annotation keep hints out; without hints a shared
// container goes to the node with the fewest containers.
func TestTopologyHintsIgnored(t *testing.T) { nativeAndWasm(t, topologyHintsIgnoredScenario) }

func topologyHintsIgnoredScenario(t *testing.T, open opener) {
	node3 := onNode("3")
	for _, tc := range []struct {
		s      spec
		onNode bool // want the hint honoured
	}{
		{burstable("ro", 100).Limited(200).WithMount("/data", "/data", []string{"ro"}, node3), false},
		{burstable("etc", 100).Limited(200).WithMount("/etc/foo", "/foo", nil, node3), false},
		{burstable("secret", 100).Limited(200).WithMount("/var/lib/kubelet/pods/0a1b-2c/volumes/kubernetes.io~secret/tok", "/tok", nil, node3), false},
		{burstable("rodev", 100).Limited(200).WithDevice("/dev/sda", true, node3), false},
		{burstable("off", 100).Limited(200).WithDevice("/dev/sda", false, node3).With("topologyhints.resource-policy.nri.io", "false"), false},
		{burstable("mountsonly", 100).Limited(200).WithDevice("/dev/sda", false, node3).With("topologyhints.resource-policy.nri.io", "mounts"), false},
		{burstable("devonly", 100).Limited(200).WithDevice("/dev/sda", false, node3).With("topologyhints.resource-policy.nri.io", "devices"), true},
		{burstable("rw", 100).Limited(200).WithMount("/data", "/data", []string{"rw"}, node3), true},
	} {
		// On an empty N4C16 a container without hints goes to node 1
		// (node 0 holds the reserved CPU: less free capacity).
		h := mustOpen(t, open, "N4C16", "")
		h.Create(tc.s)
		want := map[bool]string{true: "3", false: "1"}[tc.onNode]
		if got := h.poolOf(tc.s.ID)[1]; got != want {
			t.Errorf("%s: on node %s, want %s", tc.s.ID, got, want)
		}
		h.check()
	}
}

// TestExclusiveBesideShared: an exclusive CPU is cut from what the shared
// containers of its pool leave whole (nri-plugins' SliceableCPUs): with 500m
// shared on node 2 (CPUs 8-11, cores 8/9 and 10/11) the allocator keeps 8, 9
// and 10 sliceable and the exclusive CPU is 10, the thread of the core with
// the fewest sliceable threads, not the lowest free CPU 8. nri-plugins'
// policy, run on N4C16 with the same requests, gives the same CPUs.
func TestExclusiveBesideShared(t *testing.T) { nativeAndWasm(t, exclusiveBesideSharedScenario) }

func exclusiveBesideSharedScenario(t *testing.T, open opener) {
	h := mustOpen(t, open, "N4C16", "")
	h.Create(burstable("a", 500).WithDevice("/dev/nvme2n1", false, onNode("2")))
	h.Create(guaranteed("b", 2000).WithDevice("/dev/nvme1n1", false, onNode("1")))
	h.Create(guaranteed("c", 1000).WithDevice("/dev/nvme2n1", false, onNode("2")))
	for id, want := range map[string]string{"a": "8-9,11", "b": "4-5", "c": "10"} {
		if got := h.poolOf(id)[0]; got != want {
			t.Errorf("%s: cpus %s, want %s", id, got, want)
		}
	}
	h.check()
}
