package topologyaware_test

import (
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

const (
	annPreferShared   = "prefer-shared-cpus.resource-policy.nri.io/pod"
	annPreferIsolated = "prefer-isolated-cpus.resource-policy.nri.io/container.c"
	annPreferReserved = "prefer-reserved-cpus.resource-policy.nri.io/pod"
	annPreserveCPU    = "cpu.preserve.resource-policy.nri.io/container.c"
	annPreserveMem    = "memory.preserve.resource-policy.nri.io/pod"
)

// mixed is a scenario every machine runs: each QoS class, namespace and
// annotation, exclusive grants that shrink shared pools and removals that grow
// them back; the invariants are checked after every step.
func mixed(tb testing.TB, h *harness) {
	phases := [][]spec{{
		system("ks-dns", 100),
		system("ks-proxy", 200),
		bestEffort("be-1"),
		burstable("bu-1", 500),
		burstable("bu-2", 1000),
		guaranteed("g-frac", 1200),
		guaranteed("g-sub", 250),
		guaranteed("g-2", 2000),
		guaranteed("g-1", 1000),
		guaranteed("g-3", 3000),
		guaranteed("g-shared", 1000).With(annPreferShared, "true"),
		guaranteed("g-iso", 2000).With(annPreferIsolated, "true"),
		burstable("bu-reserved", 100).With(annPreferReserved, "true"),
		burstable("ks-opt-out", 100).In("kube-system").With(annPreferReserved, "false"),
		burstable("preserve-cpu", 100).With(annPreserveCPU, "true"),
		burstable("preserve-mem", 100).With(annPreserveMem, "true"),
		burstable("mon-1", 100).In("monitoring"),
	}, {
		guaranteed("g-4", 4000),
		bestEffort("be-2"),
	}}
	removals := [][]string{{"g-2", "be-1", "g-3"}, {"g-1", "ks-dns", "g-4"}}
	for i, steps := range phases {
		for _, s := range steps {
			h.Create(s)
			h.check("monitoring")
		}
		for _, id := range removals[i] {
			h.Remove(id)
			h.check("monitoring")
		}
	}
}

func TestScenarioInvariants(t *testing.T) {
	for _, m := range machines {
		for _, config := range []string{"", "reservedPoolNamespaces: [monitoring]\nreservedResources:\n  cpu: 2\n", "pinMemory: false\npreferSharedCPUs: true\n"} {
			t.Run(fmt.Sprintf("%s/%q", m, config), func(t *testing.T) {
				mixed(t, newHarness(t, m, config))
			})
		}
	}
}

// TestPlacement pins down concrete decisions on known machines.
func TestPlacement(t *testing.T) {
	tests := []struct {
		machine, config string
		steps           []spec
		// want is each step's cpuset_cpus and cpuset_mems.
		want [][2]string
	}{
		{
			machine: "Desktop1Socket",
			steps:   []spec{system("ks", 100), bestEffort("be"), guaranteed("g2", 2000), guaranteed("g1", 1000), guaranteed("frac", 1500)},
			// 750m reserves cpu0; exclusive grants take whole cores (1,9),
			// then the thread whose sibling is reserved (8).
			want: [][2]string{{"0", "0"}, {"1-15", "0"}, {"1,9", "0"}, {"8", "0"}, {"2-7,10-15", "0"}},
		},
		{
			machine: "PMEM112CPUIsolated",
			steps:   []spec{guaranteed("g1", 1000), guaranteed("g2", 2000), guaranteed("g2iso", 2000).With(annPreferIsolated, "true"), bestEffort("be")},
			// One CPU prefers isolated CPUs; two only when annotated. Socket
			// pools get their node's PMEM node.
			want: [][2]string{{"2", "0,2"}, {"28,84", "1,3"}, {"3,59", "0,2"}, {"29-55,85-111", "1,3"}},
		},
		{
			machine: "Server2Socket4NodesInterleaved",
			config:  "reservedResources:\n  cpu: cpuset:0\n",
			steps:   []spec{bestEffort("be1"), bestEffort("be2"), guaranteed("g2", 2000)},
			// node1 (pool 3) and node2/node3 tie on free capacity: lowest id
			// first, then the most free.
			want: [][2]string{
				{"24,26,28,30,32,34,36,38,40,42,44,46,72,74,76,78,80,82,84,86,88,90,92,94", "1"},
				{"1,3,5,7,9,11,13,15,17,19,21,23,49,51,53,55,57,59,61,63,65,67,69,71", "2"},
				{"25,73", "3"},
			},
		},
		{
			machine: "Server4Socket144CPU",
			steps:   []spec{guaranteed("g9", 9000), guaranteed("g18", 18000), guaranteed("g20", 20000), guaranteed("g40", 40000)},
			// 9 and 18 CPUs fit a die; 20 a socket; 40 only the root, where
			// whole cores go in socket, die and core order.
			want: [][2]string{{"9-13,81-84", "1"}, {"18-26,90-98", "2"}, {"36-45,108-117", "4-5"},
				{"1-8,14-17,27-34,73-80,86-89,99-106", "0-7"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.machine, func(t *testing.T) {
			h := newHarness(t, tc.machine, tc.config)
			for i, s := range tc.steps {
				resp := h.Create(s)
				got := [2]string{resp.Adjustment.CpusetCpus, resp.Adjustment.CpusetMems}
				if got != tc.want[i] {
					t.Errorf("%s: got %q, want %q", s.ID, got, tc.want[i])
				}
				h.check()
			}
		})
	}
}

// TestSharedPoolUpdates checks that shared containers are told when an
// exclusive grant shrinks their pool and when its release grows it back.
func TestSharedPoolUpdates(t *testing.T) {
	h := newHarness(t, "Desktop1Socket", "")
	h.Create(bestEffort("b"))
	h.Create(burstable("a", 500))
	resp := h.Create(guaranteed("x", 2000))
	want := []*abi.ContainerUpdate{{ContainerId: "a", CpusetCpus: "2-8,10-15"}, {ContainerId: "b", CpusetCpus: "2-8,10-15"}}
	if !equalUpdates(resp.Updates, want) {
		t.Errorf("create x: updates %v, want %v", resp.Updates, want)
	}
	h.check()
	resp = h.Create(burstable("c", 100))
	if len(resp.Updates) != 0 {
		t.Errorf("a shared container changed nobody's CPUs but answered %v", resp.Updates)
	}
	got := h.Remove("x")
	want = []*abi.ContainerUpdate{{ContainerId: "a", CpusetCpus: "1-15"}, {ContainerId: "b", CpusetCpus: "1-15"}, {ContainerId: "c", CpusetCpus: "1-15"}}
	if !equalUpdates(got, want) {
		t.Errorf("remove x: updates %v, want %v", got, want)
	}
	h.check()
	if got := h.Remove("a"); len(got) != 0 {
		t.Errorf("removing a shared container answered %v", got)
	}
}

func equalUpdates(a, b []*abi.ContainerUpdate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].EqualVT(b[i]) {
			return false
		}
	}
	return true
}

// TestExhaustion fills each machine with exclusive grants until one does not
// fit, and checks the error and that a removal makes room again.
func TestExhaustion(t *testing.T) {
	for _, m := range machines {
		t.Run(m, func(t *testing.T) {
			h := newHarness(t, m, "")
			h.Create(bestEffort("be"))
			var last string
			for i := 0; ; i++ {
				id := fmt.Sprintf("g%03d", i)
				if _, err := h.TryCreate(guaranteed(id, 2000)); err != nil {
					policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources.cpu_request_milli")
					break
				}
				last = id
				h.check()
			}
			if _, err := h.TryCreate(guaranteed("huge", 1000_000)); err == nil {
				t.Fatalf("1000 CPUs fit")
			}
			h.Remove(last)
			h.Create(guaranteed("again", 2000))
			h.check()
			// The best-effort container kept at least one CPU throughout.
		})
	}
}
