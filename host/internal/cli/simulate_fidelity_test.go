package cli

import (
	"cmp"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// fidelityMachines are the fixtures nri-plugins' e2e topologies translate to,
// by the directory name of their cases under testdata/fidelity/<policy>/.
var fidelityMachines = map[string]func() topologytest.Machine{
	"n4c16":          topologytest.N4C16,
	"n4c16-atom45":   topologytest.N4C16Atom45,
	"n4c16-core0145": topologytest.N4C16Core0145,
	"s8c4k":          topologytest.S8C4K,
	"s144-nosnc":     topologytest.Server4Socket144CPUNoSNC,
}

// expectation is what nri-plugins' e2e case verifies after a step: each
// container ("pod/container") as the case checks it, sets of containers
// whose CPUs, NUMA nodes or packages are pairwise disjoint, or whose CPUs or
// memory nodes are the same, a container whose memory nodes equal one of a
// list's, the CPU counts a set of containers has between them (the case's
// "len(a) == 3 or len(b) == 3"), and containers no longer running.
type expectation struct {
	Step             int                      `json:"step"`
	Containers       map[string]expectedShape `json:"containers"`
	Disjoint         [][]string               `json:"disjoint"`
	DisjointNodes    [][]string               `json:"disjointNodes"`
	DisjointPackages [][]string               `json:"disjointPackages"`
	SameCPUs         [][]string               `json:"sameCpus"`
	SameMems         [][]string               `json:"sameMems"`
	MemsOneOf        map[string][]string      `json:"memsOneOf"`
	Sizes            []expectedSizes          `json:"sizes"`
	Absent           []string                 `json:"absent"`
	// Refused is text the step's error must hold: the case expects the
	// container refused (nri-plugins' CreateContainerError). A step without
	// it must have no error.
	Refused string `json:"refused"`
}

// expectedSizes: the containers Of have, in some order, NCPUs CPUs.
type expectedSizes struct {
	Of    []string `json:"of"`
	NCPUs []int    `json:"ncpus"`
}

// expectedShape is a container's placement: exact cpus and mems where the
// case names them, counts of CPUs, cores, NUMA nodes and packages where it
// counts them. Absent (zero) fields are not checked.
type expectedShape struct {
	CPUs      string `json:"cpus"`
	Mems      string `json:"mems"`
	NCPUs     int    `json:"ncpus"`
	MinCPUs   int    `json:"minCpus"`
	NCores    int    `json:"ncores"`
	NNodes    int    `json:"nnodes"` // of its CPUs
	NMems     int    `json:"nmems"`  // memory nodes
	NPackages int    `json:"npackages"`
	// Unshared is how many of its CPUs no other live container has (the
	// case's len(cpus[c] - union of the others)); unset is not checked.
	Unshared *int `json:"unshared"`
}

// TestFidelity runs nri-plugins' e2e cases translated to scenarios
// (testdata/fidelity/<policy>/<machine>/<case>/: config.yaml, scenario.yaml,
// expect.yaml) through the policy's .wasm and its native build: both must
// give the same report, and the placements nri-plugins' case verifies.
// docs/fidelity.md lists every case.
func TestFidelity(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("testdata", "fidelity", "*", "*", "*", "scenario.yaml"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no fidelity cases: %v", err)
	}
	root := t.TempDir()
	sysfs := map[string]string{}
	topos := map[string]*abi.Topology{}
	for _, sc := range cases {
		dir := filepath.Dir(sc)
		parts := strings.Split(dir, string(filepath.Separator))
		policy, machine, name := parts[len(parts)-3], parts[len(parts)-2], parts[len(parts)-1]
		t.Run(policy+"/"+machine+"/"+name, func(t *testing.T) {
			if sysfs[machine] == "" {
				m, ok := fidelityMachines[machine]
				if !ok {
					t.Fatalf("no fixture for machine %q", machine)
				}
				sysfs[machine] = filepath.Join(root, machine)
				if err := m().Write(sysfs[machine]); err != nil {
					t.Fatal(err)
				}
				if topos[machine], err = topology.Discover(sysfs[machine]); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"--policy", policy, "--scenario", sc, "--config", filepath.Join(dir, "config.yaml"), "--output", "json"}
			wasm := simulate(t, sysfs[machine], args...)
			if native := simulate(t, sysfs[machine], append(args, "--native")...); native != wasm {
				t.Fatalf("--native differs from Wasm:\n%s\n---\n%s", wasm, native)
			}
			checkExpectations(t, topos[machine], filepath.Join(dir, "expect.yaml"), wasm)
		})
	}
}

// placement is a container's cpuset and memory nodes.
type placement struct{ cpus, mems string }

func checkExpectations(t *testing.T, topo *abi.Topology, file, out string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var expects []expectation
	if err := yaml.UnmarshalStrict(raw, &expects); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var report struct {
		Steps []struct {
			Step       int    `json:"step"`
			Kind       string `json:"kind"`
			Target     string `json:"target"`
			Containers []struct {
				ID, Pod, Name, CPUs, Mems string
			} `json:"containers"`
			Updates []struct {
				Container, CPUs, Mems string
			} `json:"updates"`
			Errors []json.RawMessage `json:"errors"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // container id → pod/container
	live := map[string]placement{}
	byStep := map[int][]expectation{}
	for _, e := range expects {
		byStep[e.Step] = append(byStep[e.Step], e)
	}
	for _, s := range report.Steps {
		refused := ""
		for _, e := range byStep[s.Step] {
			refused = cmp.Or(e.Refused, refused)
		}
		for _, e := range s.Errors {
			if refused == "" || !strings.Contains(string(e), refused) {
				t.Errorf("step %d: %s", s.Step, e)
			}
		}
		if refused != "" && len(s.Errors) == 0 {
			t.Errorf("step %d: not refused, want an error holding %q", s.Step, refused)
		}
		if s.Kind == "remove" {
			_, target, _ := strings.Cut(s.Target, "/") // namespace/pod[/container]
			for name := range live {
				if name == target || strings.HasPrefix(name, target+"/") {
					delete(live, name)
				}
			}
		}
		for _, u := range s.Updates {
			p := live[names[u.Container]]
			if u.CPUs != "" {
				p.cpus = u.CPUs
			}
			if u.Mems != "" {
				p.mems = u.Mems
			}
			live[names[u.Container]] = p
		}
		for _, c := range s.Containers {
			_, pod, _ := strings.Cut(c.Pod, "/") // namespace/name
			names[c.ID] = pod + "/" + c.Name
			live[names[c.ID]] = placement{c.CPUs, c.Mems}
		}
		for _, e := range byStep[s.Step] {
			checkStep(t, topo, s.Step, e, live)
		}
	}
}

func checkStep(t *testing.T, topo *abi.Topology, step int, e expectation, live map[string]placement) {
	t.Helper()
	shape := func(name string) (cpus []uint32, cores, nodes, pkgs map[uint32]bool) {
		p, ok := live[name]
		if !ok {
			t.Fatalf("step %d: no container %s", step, name)
		}
		cpus, err := topology.ParseList(p.cpus)
		if p.cpus == "" {
			// Left alone (cpu.preserve): the container runs on every CPU,
			// what nri-plugins' case reads from its cgroup.
			cpus = nil
			for _, c := range topo.GetCpus() {
				cpus = append(cpus, c.Id)
			}
		}
		if err != nil {
			t.Fatalf("step %d: %s: cpus %q: %v", step, name, p.cpus, err)
		}
		cores, nodes, pkgs = map[uint32]bool{}, map[uint32]bool{}, map[uint32]bool{}
		for _, c := range topo.GetCpus() {
			if slices.Contains(cpus, c.Id) {
				cores[c.PackageId<<16|c.CoreId] = true
				nodes[c.NumaNode] = true
				pkgs[c.PackageId] = true
			}
		}
		return cpus, cores, nodes, pkgs
	}
	var numa []uint32
	for _, n := range topo.GetNumaNodes() {
		numa = append(numa, n.Id)
	}
	allMems := topology.FormatList(numa)
	for _, name := range slices.Sorted(maps.Keys(e.Containers)) {
		want := e.Containers[name]
		cpus, cores, nodes, pkgs := shape(name)
		mems := live[name].mems
		if mems == "" {
			mems = allMems // left alone: every node
		}
		got := expectedShape{CPUs: live[name].cpus, Mems: mems, NCPUs: len(cpus), MinCPUs: len(cpus),
			NCores: len(cores), NNodes: len(nodes), NPackages: len(pkgs), NMems: len(parseList(t, mems))}
		bad := want.CPUs != "" && want.CPUs != got.CPUs || want.Mems != "" && want.Mems != got.Mems ||
			want.NCPUs != 0 && want.NCPUs != got.NCPUs || want.MinCPUs > got.NCPUs ||
			want.NCores != 0 && want.NCores != got.NCores || want.NNodes != 0 && want.NNodes != got.NNodes ||
			want.NPackages != 0 && want.NPackages != got.NPackages || want.NMems != 0 && want.NMems != got.NMems
		if bad {
			t.Errorf("step %d: %s: got cpus %s mems %s (%d CPUs, %d cores, %d nodes, %d packages), want %+v",
				step, name, got.CPUs, got.Mems, got.NCPUs, got.NCores, got.NNodes, got.NPackages, want)
		}
		if want.Unshared != nil {
			var others []uint32
			for other := range live {
				if other != name {
					set, _, _, _ := shape(other)
					others = append(others, set...)
				}
			}
			n := 0
			for _, c := range cpus {
				if !slices.Contains(others, c) {
					n++
				}
			}
			if n != *want.Unshared {
				t.Errorf("step %d: %s: %d of its CPUs %s are its own, want %d", step, name, n, live[name].cpus, *want.Unshared)
			}
		}
	}
	for _, name := range e.Absent {
		if _, ok := live[name]; ok {
			t.Errorf("step %d: %s still runs", step, name)
		}
	}
	for _, g := range e.SameMems {
		for _, name := range g[1:] {
			if shape(name); live[name].mems != live[g[0]].mems {
				t.Errorf("step %d: %s has mems %s, %s has %s; want the same", step, g[0], live[g[0]].mems, name, live[name].mems)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(e.MemsOneOf)) {
		shape(name)
		if !slices.ContainsFunc(e.MemsOneOf[name], func(o string) bool { shape(o); return live[o].mems == live[name].mems }) {
			t.Errorf("step %d: %s has mems %s, want those of one of %v", step, name, live[name].mems, e.MemsOneOf[name])
		}
	}
	for _, sz := range e.Sizes {
		var got []int
		for _, name := range sz.Of {
			cpus, _, _, _ := shape(name)
			got = append(got, len(cpus))
		}
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(sz.NCPUs))) {
			t.Errorf("step %d: %v have %v CPUs, want %v in some order", step, sz.Of, got, sz.NCPUs)
		}
	}
	disjoint := func(kind string, groups [][]string, of func(string) map[uint32]bool) {
		for _, g := range groups {
			seen := map[uint32]string{}
			for _, name := range g {
				for id := range of(name) {
					if other, ok := seen[id]; ok {
						t.Errorf("step %d: %s and %s share %s %d", step, other, name, kind, id)
					}
					seen[id] = name
				}
			}
		}
	}
	for _, g := range e.SameCPUs {
		for _, name := range g[1:] {
			if shape(name); live[name].cpus != live[g[0]].cpus {
				t.Errorf("step %d: %s has cpus %s, %s has %s; want the same", step, g[0], live[g[0]].cpus, name, live[name].cpus)
			}
		}
	}
	disjoint("CPU", e.Disjoint, func(n string) map[uint32]bool {
		cpus, _, _, _ := shape(n)
		m := map[uint32]bool{}
		for _, c := range cpus {
			m[c] = true
		}
		return m
	})
	disjoint("NUMA node", e.DisjointNodes, func(n string) map[uint32]bool { _, _, nodes, _ := shape(n); return nodes })
	disjoint("package", e.DisjointPackages, func(n string) map[uint32]bool { _, _, _, p := shape(n); return p })
}

func parseList(t *testing.T, s string) []uint32 {
	t.Helper()
	ids, err := topology.ParseList(s)
	if err != nil {
		t.Fatalf("list %q: %v", s, err)
	}
	return ids
}

// TestSimulateReportsPolicyWarnings: what the policy logs as warnings (here,
// the nri-plugins fields its configuration ignores) is in the report, the
// same from the .wasm and natively.
func TestSimulateReportsPolicyWarnings(t *testing.T) {
	sysfs := capturedVM(t)
	config := filepath.Join("..", "..", "..", "policies", "topologyaware", "testdata", "nri-plugins-helm.yaml")
	for _, native := range []bool{false, true} {
		args := []string{"--policy", "topology-aware", "--config", config}
		if native {
			args = append(args, "--native")
		}
		out := simulate(t, sysfs, args...)
		head, _, _ := strings.Cut(out, "\nnode:")
		for _, f := range []string{"agent", "control", "controllableInterrupts", "instrumentation", "log"} {
			if !strings.Contains(head, "config."+f+": ignored: ") {
				t.Errorf("native %t: the report's policy warnings lack config.%s:\n%s", native, f, head)
			}
		}
	}
}
