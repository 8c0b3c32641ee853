package topologyaware_test

import "testing"

const gib = 1 << 30

// TestMemoryLimit: a Burstable container whose memory limit exceeds its
// request goes to a pool whose memory holds the limit, and gets that pool's
// memory nodes (nri-plugins' memory offer burstability); without a limit, to
// the pool with the most memory. Memory is allocated by request, so limits
// adding up to more than the machine has do not refuse anyone. N4C16 has
// 2 GiB per node, 4 GiB per socket.
func TestMemoryLimit(t *testing.T) { nativeAndWasm(t, memoryLimitScenario) }

func memoryLimitScenario(t *testing.T, open opener) {
	h := mustOpen(t, open, "N4C16", "")
	for _, tc := range []struct {
		s    spec
		mems string
	}{
		{burstable("fits-node", 1000).Limited(2000).Memory(100<<20, 1*gib), "1"},
		{burstable("two-nodes", 1000).Limited(2000).Memory(100<<20, 3*gib), "2-3"},
		{burstable("all", 1000).Limited(2000).Memory(200<<20, 5*gib), "0-3"},
		{burstable("again", 1000).Limited(2000).Memory(100<<20, 3*gib), "0-1"},
		{burstable("unlimited", 1000).Limited(2000).Memory(200<<20, 0), "0-3"},
		// A request equal to the limit: the usual pool, a node (node 0
		// holds the reserved CPU, so its neighbours come first), but 3G
		// does not fit in a 2G node: the memory accounting widens it to
		// the node and its neighbour (nri-plugins' libmem).
		{burstable("equal", 1000).Limited(2000).Memory(3*gib, 3*gib), "2-3"},
		// Another 3G in socket 1 overcommits nodes 2-3: the Burstable
		// containers there, two-nodes and equal, move out to every node.
		{guaranteed("g", 1000).Memory(3*gib, 3*gib), "2-3"},
	} {
		h.Create(tc.s)
		if got := h.poolOf(tc.s.ID)[1]; got != tc.mems {
			t.Errorf("%s: mems %s, want %s", tc.s.ID, got, tc.mems)
		}
	}
	for _, id := range []string{"two-nodes", "equal"} {
		if got := h.poolOf(id)[1]; got != "0-3" {
			t.Errorf("%s: mems %s after g, want 0-3", id, got)
		}
	}
	h.check()
}
