package topologyaware_test

import (
	"testing"
)

const annMemoryType = "memory-type.resource-policy.nri.io/container.c"

// TestMemoryType: HBMAndPMEM has two sockets of one DRAM node each (0, 1),
// an HBM node by socket 0 (2) and a PMEM node by each (3, 4). A container
// gets DRAM and PMEM by default, never HBM (nri-plugins' default memory
// type); memory-type picks kinds, and a pool with them.
func TestMemoryType(t *testing.T) { nativeAndWasm(t, memoryTypeScenario) }

func memoryTypeScenario(t *testing.T, open opener) {
	h := mustOpen(t, open, "HBMAndPMEM", "")
	for _, tc := range []struct {
		s    spec
		mems string // want
	}{
		{limitedShared("a"), "1,4"},
		{limitedShared("b"), "0,3"},
		// Only socket 0 has HBM, though it has more containers.
		{limitedShared("hbm").with(annMemoryType, "hbm"), "2"},
		{limitedShared("dram-hbm").with(annMemoryType, "DRAM,HBM"), "0,2"},
		{limitedShared("pmem").with(annMemoryType, "pmem"), "4"},
		{guaranteed("dram", 1000).with(annMemoryType, "dram"), "1"},
	} {
		h.create(tc.s)
		if got := h.poolOf(tc.s.id)[1]; got != tc.mems {
			t.Errorf("%s: mems %s, want %s", tc.s.id, got, tc.mems)
		}
	}
	// An unknown kind is ignored: the default kinds.
	h.create(limitedShared("gpu").with(annMemoryType, "gpu"))
	if got := h.poolOf("gpu")[1]; got != "0,3" && got != "1,4" {
		t.Errorf("gpu: mems %s, want a socket's DRAM and PMEM", got)
	}
	h.check()
}
