package topologyaware_test

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// The n6-hbm-cxl machine (nri-plugins' e2e VM): DRAM nodes 0 (cpus 0-3) and
// 1 (cpus 4-7) of 2 GiB, HBM nodes 2 and 3 of 1 GiB, PMEM nodes 4 and 5 of
// 4 GiB.
const memMachine = "N6HBMCXL"

// pmem is a Guaranteed container of 100m and size bytes of PMEM.
func pmem(id string, size int64) spec {
	return guaranteed(id, 100).Memory(size, size).With(annMemoryType, "pmem")
}

// TestMemoryAccounting: memory requests are accounted per zone as
// nri-plugins' libmem does. A request no single node of its kind can still
// hold is spread over the nearest nodes of that kind; a removed container's
// memory comes back; a restarted instance accounts what it adopts.
func TestMemoryAccounting(t *testing.T) { nativeAndWasm(t, memoryAccountingScenario) }

func memoryAccountingScenario(t *testing.T, open opener) {
	h := mustOpen(t, open, memMachine, "")
	h.Create(pmem("a", 2816<<20))
	h.Create(pmem("b", 2816<<20))
	if a, b := h.poolOf("a")[1], h.poolOf("b")[1]; a == b || (a != "4" && a != "5") || (b != "4" && b != "5") {
		t.Fatalf("a, b: mems %s, %s; want one PMEM node each", a, b)
	}
	// 1.25G is left in each PMEM node: 2G fits only over both.
	h.Create(pmem("c", 2*gib))
	if got := h.poolOf("c")[1]; got != "4-5" {
		t.Errorf("c: mems %s, want 4-5 (no PMEM node has 2G left)", got)
	}
	h.check()

	// An agent restart: the new instance accounts what it adopts, so it
	// spreads the next 2G as the old one would.
	h2, err := open(t, memMachine, "", h.RestoreState())
	if err != nil {
		t.Fatalf("Init with restore: %v", err)
	}
	adoptView(h, h2)
	if d1, d2 := h.dumpRaw(), h2.dumpRaw(); string(d1) != string(d2) {
		t.Fatalf("restored state differs:\n%s\n---\n%s", d1, d2)
	}
	r1, r2 := h.Create(pmem("d", gib)), h2.Create(pmem("d", gib))
	if !r1.EqualVT(r2) {
		t.Errorf("d: restored instance answered %v, the original %v", r2, r1)
	}
	// 1G more in a PMEM node (1.25G free) overcommits PMEM as a whole
	// (8.5G of 8G): c, spread already, takes DRAM too (libmem widens
	// by the request's kinds, then DRAM, PMEM, HBM).
	if got := h2.poolOf("d")[1]; got != "4" && got != "5" {
		t.Errorf("d after restart: mems %s, want one PMEM node", got)
	}
	for _, x := range []*harness{h, h2} {
		if got := x.poolOf("c")[1]; got != "0-1,4-5" {
			t.Errorf("c after d: mems %s, want 0-1,4-5", got)
		}
	}
	h2.check()

	// Removing a and c gives their memory back: 2G fits in a's node again.
	h.Remove("a")
	h.Remove("c")
	h.Remove("d")
	h.Create(pmem("e", 2*gib))
	if got := h.poolOf("e")[1]; got != "4" && got != "5" {
		t.Errorf("e: mems %s, want one PMEM node (a's and c's memory came back)", got)
	}
	h.check()
}

// TestMemoryOvercommitMoves: when a new request overcommits a zone, the
// zone's lowest-priority requests move to a wider zone (Burstable before
// Guaranteed), their containers updated; a pool whose offer needs no
// widening of the new request itself wins.
func TestMemoryOvercommitMoves(t *testing.T) { nativeAndWasm(t, memoryOvercommitScenario) }

func memoryOvercommitScenario(t *testing.T, open opener) {
	h := mustOpen(t, open, memMachine, "")
	h.Create(pmem("g1", 3584<<20))
	h.Create(burstable("b", 100).Limited(200).Memory(gib, gib).With(annMemoryType, "pmem"))
	g1, b := h.poolOf("g1")[1], h.poolOf("b")[1]
	if g1 == b {
		t.Fatalf("g1 and b share PMEM node %s; want one each", g1)
	}
	// g2 overcommits either node: next to g1 it would itself have to
	// spread (Guaranteed, younger), next to b only b moves.
	r := h.Create(pmem("g2", 3584<<20))
	if got := h.poolOf("g2")[1]; got != b {
		t.Errorf("g2: mems %s, want b's node %s", got, b)
	}
	if got := h.poolOf("b")[1]; got != "4-5" {
		t.Errorf("b: mems %s, want 4-5 (moved out of the overcommitted node)", got)
	}
	var moved bool
	for _, u := range r.GetUpdates() {
		if u.GetContainerId() == "b" && u.GetCpusetMems() == "4-5" {
			moved = true
		}
	}
	if !moved {
		t.Errorf("g2's answer %v has no update moving b to 4-5", r.GetUpdates())
	}
	h.check()

	// 8G of the node's 14G is taken: 7G more fits nowhere, not even
	// spread over every kind.
	_, err := h.TryCreate(pmem("full", 7*gib))
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources.memory_request_bytes")
	h.check()
}

// TestMemoryMovesInSynchronize: containers Synchronize places (no
// assignment) are accounted in id order, and one that a later placement
// moves is told its final CPUs and memory nodes in one update.
func TestMemoryMovesInSynchronize(t *testing.T) {
	h := newHarness(t, memMachine, "")
	req := &abi.SynchronizeRequest{}
	for _, s := range []spec{
		burstable("b", 100).Limited(200).Memory(gib, gib).With(annMemoryType, "pmem"),
		pmem("g1", 3584<<20),
		pmem("g2", 3584<<20),
	} {
		r := s.Request()
		req.Pods, req.Containers = append(req.Pods, r.Pod), append(req.Containers, r.Container)
	}
	resp, err := h.Client.Synchronize(context.Background(), req)
	if err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	got := map[string]*abi.ContainerUpdate{}
	for _, u := range resp.GetUpdates() {
		got[u.GetContainerId()] = u
	}
	// g1 next to b would move b; beside it, nothing moves: g1 takes the
	// other PMEM node. g2 then overcommits both: beside b only b moves.
	if u := got["b"]; u.GetCpusetCpus() == "" || u.GetCpusetMems() != "4-5" {
		t.Errorf("b's update %v, want its CPUs and mems 4-5", u)
	}
	if g1, g2 := got["g1"].GetCpusetMems(), got["g2"].GetCpusetMems(); g1 == g2 || (g1 != "4" && g1 != "5") || (g2 != "4" && g2 != "5") {
		t.Errorf("g1, g2: mems %s, %s; want one PMEM node each", g1, g2)
	}
}
