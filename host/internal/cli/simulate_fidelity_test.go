package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// The fidelity cases are nri-plugins' e2e cases
// (test/e2e/policies.test-suite/<policy>/<machine>/<case>) translated into
// `nriwasm simulate` files, one directory per case:
// policies/<policy>/testdata/fidelity/<machine>/<case>/ holds config.yaml
// (the case's configuration), scenario.yaml (its pods, in the simulate
// format), expect.yaml (its verify lines, as expectations after the step of
// that index) and report.json (the report simulate gives, the golden; go
// test -run TestFidelity -update rewrites it). A new case is a new
// directory; docs/fidelity.md says how to write one and lists them all.

// fidelityPolicies are the built-in policies with cases, by the directory
// under policies/ that holds them.
var fidelityPolicies = map[string]string{
	"balloons":      "balloons",
	"topologyaware": "topology-aware",
}

// fidelityMachines write the sysfs tree of each e2e machine the cases run
// on, by the directory name of its cases.
var fidelityMachines = map[string]func(dir string) error{
	"n4c16": topologytest.N4C16().Write,
	"s8c4k": topologytest.S8C4K().Write,
	// nri-plugins' n6-hbm-cxl: HBM nodes 2-3, PMEM nodes 4-5.
	"n6-hbm-cxl": topologytest.N6HBMCXL().Write,
	// n4c16 with topology-aware test08-cpuprio-allocation's core kinds
	// (OVERRIDE_SYS_ATOM_CPUS=4-5, then OVERRIDE_SYS_CORE_CPUS=0-1,4-5).
	"n4c16-atom45":   topologytest.N4C16Atom45().Write,
	"n4c16-core0145": topologytest.N4C16Core0145().Write,
	// n4c16 whose CPUs' energy-performance preferences differ (no e2e
	// case of nri-plugins has them; ours is cpuprio-epp).
	"n4c16-epp": topologytest.N4C16EPP().Write,
	// nri-plugins' pkg/sysfs fixture 4-socket-server-nosnc.
	"s144-nosnc": topologytest.Server4Socket144CPUNoSNC().Write,
	// n4c16 booted with isolcpus=0,1 (balloons test22-isolcpus sets it).
	"n4c16-isolcpus": func(dir string) error {
		m := topologytest.N4C16()
		m.Isolated = "0-1"
		return m.Write(dir)
	},
	// n4c16 booted with a kernel built without NUMA (balloons
	// test30-numa-disabled).
	"n4c16-nonuma": func(dir string) error {
		if err := topologytest.N4C16().Write(dir); err != nil {
			return err
		}
		return withoutNUMA(dir)
	},
	// n4c128 with topology-aware test19-cacheclusters' OVERRIDE_SYS_CACHES:
	// each of its CPU lists is a cache of its own, numbered in the order
	// the override lists them (nri-plugins' parseCpuCacheOverrides), so 16
	// L3s of 8 CPUs (4 cores), 4 per node, and an L2 per package.
	"n4c128-l3x16": func(dir string) error {
		return withCaches(dir, topologytest.N4C128(),
			"0-7 64-71 8-15 72-79 48-55 112-119 56-63 120-127 16-23 80-87 24-31 88-95 32-39 96-103 40-47 104-111",
			"0-63 64-127")
	},
	// n4c16 with balloons test13-cacheclusters' OVERRIDE_SYS_CACHES: an L3
	// per package, and an L2 per NUMA node (l2x4) or per core (l2x2).
	"n4c16-l2x4": func(dir string) error {
		return withCaches(dir, topologytest.N4C16(), "0-7 8-15", "0-3 4-7 8-11 12-15")
	},
	"n4c16-l2x2": func(dir string) error {
		return withCaches(dir, topologytest.N4C16(), "0-7 8-15", "0-1 2-3 4-5 6-7 8-9 10-11 12-13 14-15")
	},
}

// withoutNUMA makes the sysfs tree under dir what a kernel built without
// NUMA shows: no devices/system/node, no memory tiers and no CPU's nodeN
// link.
func withoutNUMA(dir string) error {
	links, err := filepath.Glob(filepath.Join(dir, "devices", "system", "cpu", "cpu*", "node*"))
	if err != nil {
		return fmt.Errorf("without NUMA: %w", err)
	}
	for _, p := range append(links, filepath.Join(dir, "devices", "system", "node"), filepath.Join(dir, "devices", "virtual", "memory_tiering")) {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("without NUMA: %w", err)
		}
	}
	return nil
}

// withCaches writes m's sysfs tree under dir with its L2 and L3 caches as
// nri-plugins' e2e OVERRIDE_SYS_CACHES sets them: one unified L2 (4 MiB)
// per CPU list of l2 and one unified L3 (128 MiB) per list of l3
// (space-separated lists), in cache/index2 and cache/index3 of each CPU.
func withCaches(dir string, m topologytest.Machine, l3, l2 string) error {
	if err := m.Write(dir); err != nil {
		return err
	}
	for _, level := range []struct {
		index, size, lists string
	}{{"index2", "4096K", l2}, {"index3", "131072K", l3}} {
		for id, list := range strings.Fields(level.lists) {
			cpus, err := topology.ParseList(list)
			if err != nil {
				return fmt.Errorf("cache list %q: %w", list, err)
			}
			for _, cpu := range cpus {
				cache := filepath.Join(dir, "devices", "system", "cpu", fmt.Sprintf("cpu%d", cpu), "cache", level.index)
				for file, content := range map[string]string{"shared_cpu_list": list, "id": fmt.Sprint(id), "size": level.size} {
					if err := os.WriteFile(filepath.Join(cache, file), []byte(content), 0o644); err != nil {
						return fmt.Errorf("cache of cpu%d: %w", cpu, err)
					}
				}
			}
		}
	}
	return nil
}

// expectation is what nri-plugins' e2e case verifies after a step: each
// container ("pod/container") as the case checks it, sets of containers
// whose CPUs, NUMA nodes or packages are pairwise disjoint, or whose CPUs or
// memory nodes are the same, a container whose memory nodes equal one of a
// list's, the CPU counts a set of containers has between them (the case's
// "len(a) == 3 or len(b) == 3"), the CPUs containers hold together or in
// common, and containers no longer running.
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
	Sets             []expectedSets           `json:"sets"`
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

// expectedSets checks containers' CPUs together (nri-plugins'
// set.union(...) and set.intersection(...) verify lines): how many CPUs
// the containers Of hold together (Union) and all hold (Common).
type expectedSets struct {
	Of     []string `json:"of"`
	Union  *int     `json:"union"`
	Common *int     `json:"common"`
}

// expectedShape is a container's placement: exact cpus and mems where the
// case names them, counts of CPUs, cores, NUMA nodes and packages where it
// counts them, and its CPUs against CPU lists and other containers' CPUs.
// Absent (zero) fields are not checked.
type expectedShape struct {
	CPUs      string `json:"cpus"`
	Mems      string `json:"mems"`
	NCPUs     int    `json:"ncpus"`
	MinCPUs   int    `json:"minCpus"`
	MaxCPUs   int    `json:"maxCpus"`
	NCores    int    `json:"ncores"`
	NNodes    int    `json:"nnodes"` // of its CPUs
	NMems     int    `json:"nmems"`  // memory nodes
	NPackages int    `json:"npackages"`
	// Unshared is how many of its CPUs no other live container has (the
	// case's len(cpus[c] - union of the others)); unset is not checked.
	Unshared *int `json:"unshared"`
	// Nodes is the NUMA nodes of its CPUs, exactly; NotNodes, nodes none
	// of its CPUs is on.
	Nodes    string `json:"nodes"`
	NotNodes string `json:"notNodes"`
	// Within is a CPU list its CPUs are a subset of; CountIn, how many of
	// its CPUs each CPU list holds.
	Within  string         `json:"within"`
	CountIn map[string]int `json:"countIn"`
	// Same is a container with the same CPUs; Inside, one whose CPUs hold
	// all of its; Disjoint, containers it has no CPU in common with.
	Same     string   `json:"same"`
	Inside   string   `json:"inside"`
	Disjoint []string `json:"disjoint"`
	// SameNodes is a container whose CPUs are on the same NUMA nodes;
	// DisjointNodes, containers whose CPUs are on none of its CPUs' nodes.
	SameNodes     string   `json:"sameNodes"`
	DisjointNodes []string `json:"disjointNodes"`
}

// TestFidelity runs every policy's fidelity cases through the policy's
// .wasm and its native build: both must give the same report, equal to the
// case's report.json (-update rewrites it), with the placements nri-plugins'
// case verifies.
func TestFidelity(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("..", "..", "..", "policies", "*", "testdata", "fidelity", "*", "*", "scenario.yaml"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no fidelity cases: %v", err)
	}
	root := t.TempDir()
	sysfs := map[string]string{}
	topos := map[string]*abi.Topology{}
	for _, sc := range cases {
		dir := filepath.Dir(sc)
		parts := strings.Split(dir, string(filepath.Separator))
		policyDir, machine, name := parts[len(parts)-5], parts[len(parts)-2], parts[len(parts)-1]
		policy, ok := fidelityPolicies[policyDir]
		if !ok {
			t.Fatalf("%s: no built-in policy for policies/%s in fidelityPolicies", dir, policyDir)
		}
		t.Run(policy+"/"+machine+"/"+name, func(t *testing.T) {
			if sysfs[machine] == "" {
				write, ok := fidelityMachines[machine]
				if !ok {
					t.Fatalf("no fixture for machine %q", machine)
				}
				dir := filepath.Join(root, machine)
				if err := write(dir); err != nil {
					t.Fatal(err)
				}
				if topos[machine], err = topology.Discover(dir); err != nil {
					t.Fatal(err)
				}
				sysfs[machine] = dir
			}
			args := []string{"--policy", policy, "--scenario", sc, "--config", filepath.Join(dir, "config.yaml"), "--output", "json"}
			wasm := simulate(t, sysfs[machine], args...)
			if native := simulate(t, sysfs[machine], append(args, "--native")...); native != wasm {
				t.Fatalf("--native differs from Wasm:\n%s\n---\n%s", wasm, native)
			}
			golden(t, filepath.Join(dir, "report.json"), wasm)
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
	nodesOf := func(cpus cpuset.Set) cpuset.Set {
		var nodes []uint32
		for _, n := range topo.GetNumaNodes() {
			if setOf(n.Cpus).Intersects(cpus) {
				nodes = append(nodes, n.Id)
			}
		}
		return setOf(nodes)
	}
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
			want.NCPUs != 0 && want.NCPUs != got.NCPUs || want.MinCPUs > got.NCPUs || want.MaxCPUs != 0 && want.MaxCPUs < got.NCPUs ||
			want.NCores != 0 && want.NCores != got.NCores || want.NNodes != 0 && want.NNodes != got.NNodes ||
			want.NPackages != 0 && want.NPackages != got.NPackages || want.NMems != 0 && want.NMems != got.NMems
		if bad {
			t.Errorf("step %d: %s: got cpus %s mems %s (%d CPUs, %d cores, %d nodes, %d packages), want %+v",
				step, name, got.CPUs, got.Mems, got.NCPUs, got.NCores, got.NNodes, got.NPackages, want)
		}
		checkRelations(t, step, name, want, setOf(cpus), func(o string) cpuset.Set { c, _, _, _ := shape(o); return setOf(c) }, nodesOf)
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
	for _, sz := range e.Sets {
		var union, common cpuset.Set
		for i, name := range sz.Of {
			cpus, _, _, _ := shape(name)
			set := setOf(cpus)
			union = union.Union(set)
			if i == 0 {
				common = set
			}
			common = common.Intersection(set)
		}
		if sz.Union != nil && union.Size() != *sz.Union {
			t.Errorf("step %d: %v hold %s together, want %d CPUs", step, sz.Of, union, *sz.Union)
		}
		if sz.Common != nil && common.Size() != *sz.Common {
			t.Errorf("step %d: %v all hold %s, want %d CPUs", step, sz.Of, common, *sz.Common)
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

// checkRelations checks a container's CPUs (cpus) against the CPU lists
// and the other containers (their CPUs from cpusOf) that want names, and the
// NUMA nodes of its CPUs (nodesOf) against theirs.
func checkRelations(t *testing.T, step int, name string, want expectedShape, cpus cpuset.Set, cpusOf func(string) cpuset.Set, nodesOf func(cpuset.Set) cpuset.Set) {
	t.Helper()
	list := func(field, s string) cpuset.Set {
		set, err := cpuset.Parse(s)
		if err != nil {
			t.Fatalf("step %d: %s: %s %q: %v", step, name, field, s, err)
		}
		return set
	}
	nodes := nodesOf(cpus)
	if want.Nodes != "" && !nodes.Equal(list("nodes", want.Nodes)) {
		t.Errorf("step %d: %s: CPUs %s on nodes %s, want nodes %s", step, name, cpus, nodes, want.Nodes)
	}
	if want.NotNodes != "" && nodes.Intersects(list("notNodes", want.NotNodes)) {
		t.Errorf("step %d: %s: CPUs %s on nodes %s, want none on %s", step, name, cpus, nodes, want.NotNodes)
	}
	if want.Within != "" && !cpus.IsSubsetOf(list("within", want.Within)) {
		t.Errorf("step %d: %s: CPUs %s, want within %s", step, name, cpus, want.Within)
	}
	for _, set := range slices.Sorted(maps.Keys(want.CountIn)) {
		if got := cpus.Intersection(list("countIn", set)).Size(); got != want.CountIn[set] {
			t.Errorf("step %d: %s: %d of its CPUs %s in %s, want %d", step, name, got, cpus, set, want.CountIn[set])
		}
	}
	if want.Same != "" && !cpus.Equal(cpusOf(want.Same)) {
		t.Errorf("step %d: %s: CPUs %s, want %s's %s", step, name, cpus, want.Same, cpusOf(want.Same))
	}
	if want.Inside != "" && !cpus.IsSubsetOf(cpusOf(want.Inside)) {
		t.Errorf("step %d: %s: CPUs %s, want inside %s's %s", step, name, cpus, want.Inside, cpusOf(want.Inside))
	}
	for _, o := range want.Disjoint {
		if other := cpusOf(o); cpus.Intersects(other) {
			t.Errorf("step %d: %s: CPUs %s overlap %s's %s", step, name, cpus, o, other)
		}
	}
	if want.SameNodes != "" {
		if other := nodesOf(cpusOf(want.SameNodes)); !nodes.Equal(other) {
			t.Errorf("step %d: %s: CPUs %s on nodes %s, want %s's nodes %s", step, name, cpus, nodes, want.SameNodes, other)
		}
	}
	for _, o := range want.DisjointNodes {
		if other := nodesOf(cpusOf(o)); nodes.Intersects(other) {
			t.Errorf("step %d: %s: CPUs %s on nodes %s, which overlap %s's nodes %s", step, name, cpus, nodes, o, other)
		}
	}
}

// setOf is ids as a set.
func setOf(ids []uint32) cpuset.Set { return cpuset.New(ids...) }

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
