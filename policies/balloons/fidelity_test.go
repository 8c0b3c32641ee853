package balloons_test

import (
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
	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// The golden cases: nri-plugins' balloons e2e cases
// (test/e2e/policies.test-suite/balloons) translated into `nriwasm
// simulate` files, one directory each under testdata/fidelity/MACHINE/:
// config.yaml (the case's configuration), scenario.yaml (the pods, as
// docs/simulate.md writes them) and expect.yaml (the e2e case's verify
// lines, as checks after named steps). docs/fidelity.md lists them.
//
// The runner here plays the subset of the scenario format the cases use
// (pod, remove, reconfigure) through the test harness, so the invariants
// are checked after every step too.

// fidelityMachines are the e2e machines a fixture reproduces, by the e2e
// suite's directory name.
var fidelityMachines = map[string]func(testing.TB) *abi.Topology{
	"n4c16": func(tb testing.TB) *abi.Topology { return policytest.Machine(tb, "N4C16") },
	// n4c16 booted with isolcpus=0,1 (test22-isolcpus sets it).
	"n4c16-isolcpus": func(tb testing.TB) *abi.Topology {
		return policytest.Isolate(policytest.Machine(tb, "N4C16"), cpuset.New(0, 1))
	},
	"s8c4k": func(tb testing.TB) *abi.Topology { return policytest.Machine(tb, "S8C4K") },
	// n4c16 with test13-cacheclusters' OVERRIDE_SYS_CACHES: an L3 per
	// package, and an L2 per NUMA node (l2x4) or per core (l2x2).
	"n4c16-l2x4": func(tb testing.TB) *abi.Topology {
		return withCaches(tb, policytest.Machine(tb, "N4C16"), "0-7 8-15", "0-3 4-7 8-11 12-15")
	},
	"n4c16-l2x2": func(tb testing.TB) *abi.Topology {
		return withCaches(tb, policytest.Machine(tb, "N4C16"), "0-7 8-15", "0-1 2-3 4-5 6-7 8-9 10-11 12-13 14-15")
	},
	// n4c16 booted with a kernel built without NUMA (test30-numa-disabled).
	"n4c16-nonuma": func(tb testing.TB) *abi.Topology { return withoutNUMA(policytest.Machine(tb, "N4C16")) },
}

// withoutNUMA is a copy of topo as the host discovers it on a kernel built
// without NUMA (host/topology, discoverNodes): no devices/system/node, so
// one node 0 of DRAM with every CPU, its distance to itself only and its
// memory unknown; devices name no node (their numa_node reads -1).
func withoutNUMA(topo *abi.Topology) *abi.Topology {
	t := topo.CloneVT()
	n := &abi.NUMANode{Distances: []*abi.NodeDistance{{Node: 0, Distance: 10}}, MemoryKind: abi.MemoryKind_MEMORY_KIND_DRAM}
	for _, c := range t.Cpus {
		c.NumaNode = 0
		n.Cpus = append(n.Cpus, c.Id)
	}
	t.NumaNodes = []*abi.NUMANode{n}
	for _, d := range t.PciDevices {
		d.NumaNode = nil
	}
	for _, i := range t.NetworkInterfaces {
		i.NumaNode = nil
	}
	return t
}

// withCaches is a copy of topo with its caches as nri-plugins' e2e
// OVERRIDE_SYS_CACHES sets them (sysfs' cache/indexN, in its order): an L1
// data and an L1 instruction cache per core, as topo has them, then one
// unified L2 per CPU list of l2 and one unified L3 per list of l3
// (space-separated lists).
func withCaches(tb testing.TB, topo *abi.Topology, l3, l2 string) *abi.Topology {
	t := topo.CloneVT()
	var l1 []*abi.Cache
	for _, c := range t.Caches {
		if c.Level == 1 {
			l1 = append(l1, c)
		}
	}
	t.Caches = l1
	for _, level := range []struct {
		n     uint32
		size  uint64
		lists string
	}{{2, 4 << 20, l2}, {3, 128 << 20, l3}} {
		for i, list := range strings.Fields(level.lists) {
			t.Caches = append(t.Caches, &abi.Cache{Id: uint32(len(t.Caches)), Level: level.n, Type: abi.CacheType_CACHE_TYPE_UNIFIED,
				SizeBytes: level.size, Cpus: policytest.MustSet(tb, list).Sorted(), SysfsId: uint32(i)})
		}
	}
	for _, cpu := range t.Cpus {
		cpu.CacheIds = nil
		for _, c := range t.Caches {
			if slices.Contains(c.Cpus, cpu.Id) {
				cpu.CacheIds = append(cpu.CacheIds, c.Id)
			}
		}
	}
	return t
}

// fidelityScenario is the part of the scenario file the cases use.
type fidelityScenario struct {
	Description string         `json:"description"`
	Steps       []fidelityStep `json:"steps"`
}

type fidelityStep struct {
	Pod         *fidelityPod `json:"pod,omitempty"`
	Remove      string       `json:"remove,omitempty"`
	Reconfigure any          `json:"reconfigure,omitempty"`
}

type fidelityPod struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Containers  []struct {
		Name      string `json:"name"`
		Resources struct {
			Requests map[string]string `json:"requests"`
			Limits   map[string]string `json:"limits"`
		} `json:"resources"`
	} `json:"containers"`
}

// label names a step for expect.yaml: "pod NAME", "remove TARGET" or
// "reconfigure".
func (s fidelityStep) label() string {
	switch {
	case s.Pod != nil:
		return "pod " + s.Pod.Name
	case s.Remove != "":
		return "remove " + s.Remove
	}
	return "reconfigure"
}

// fidelityExpect is one expect.yaml entry: checks after the next step
// labelled After.
type fidelityExpect struct {
	After string `json:"after"`
	// Error: the step fails with a message containing it.
	Error      string                     `json:"error"`
	Containers map[string]containerExpect `json:"containers"`
	// Sets checks the CPUs of groups of containers together.
	Sets []setsExpect `json:"sets"`
}

// setsExpect checks containers' CPUs together (nri-plugins'
// set.union(...) and set.intersection(...) verify lines).
type setsExpect struct {
	Of     []string `json:"of"`     // the containers, by name
	Union  *int     `json:"union"`  // how many CPUs they hold together
	Common *int     `json:"common"` // how many CPUs they all hold
}

// containerExpect checks a container (by its name, pod0c0) against what the
// runtime holds. Sets are CPU lists ("0-3,8").
type containerExpect struct {
	CPUs     *int           `json:"cpus"`     // how many CPUs
	MinCPUs  int            `json:"minCPUs"`  // at least this many CPUs
	MaxCPUs  int            `json:"maxCPUs"`  // at most this many CPUs
	Cores    int            `json:"cores"`    // on how many physical cores
	Nodes    string         `json:"nodes"`    // the NUMA nodes of its CPUs, exactly
	NotNodes string         `json:"notNodes"` // none of its CPUs on these NUMA nodes
	Mems     string         `json:"mems"`     // its cpuset.mems, exactly
	Within   string         `json:"within"`   // its CPUs are a subset
	CountIn  map[string]int `json:"countIn"`  // how many of its CPUs each set holds
	Same     string         `json:"same"`     // the same CPUs as this container
	Inside   string         `json:"inside"`   // a subset of this container's CPUs
	Disjoint []string       `json:"disjoint"` // no CPU in common with these containers
	// SameNodes: its CPUs on the NUMA nodes of this container's, exactly.
	SameNodes string `json:"sameNodes"`
	// DisjointNodes: none of its CPUs' NUMA nodes is one of these
	// containers' (nri-plugins' disjoint_sets(nodes[...])).
	DisjointNodes []string `json:"disjointNodes"`
}

func TestFidelity(t *testing.T) {
	dirs, err := filepath.Glob("testdata/fidelity/*/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range dirs {
		machine, name := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
		t.Run(machine+"/"+name+"/native", func(t *testing.T) { runFidelity(t, nativeOpen, machine, dir) })
		t.Run(machine+"/"+name+"/wasm", func(t *testing.T) {
			if testing.Short() {
				t.Skip("loads the .wasm")
			}
			calls := 0
			runFidelity(t, teeOpener(&calls), machine, dir)
		})
	}
}

func readYAML(t *testing.T, path string, v any) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := yaml.UnmarshalStrict(b, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return b
}

func runFidelity(t *testing.T, open opener, machine, dir string) {
	config := readYAML(t, filepath.Join(dir, "config.yaml"), nil)
	var sc fidelityScenario
	var expects []fidelityExpect
	readYAML(t, filepath.Join(dir, "scenario.yaml"), &sc)
	readYAML(t, filepath.Join(dir, "expect.yaml"), &expects)
	if cfg, err := balloons.ParseConfig(config); err == nil {
		// The invariants let these namespaces into the reserved balloon.
		ns := cfg.ReservedPoolNamespaces
		for _, bt := range cfg.BalloonTypes {
			if bt.Name == "reserved" {
				ns = append(ns, bt.Namespaces...)
			}
		}
		reservedNamespaces[t.Name()] = ns
	}
	h := mustOpen(t, open, machine, string(config))
	ids := map[string]string{} // container name → id, as simulate names them
	next := 0
	for i, step := range sc.Steps {
		err := h.play(step, ids)
		if next < len(expects) && expects[next].After == step.label() {
			e := expects[next]
			next++
			switch {
			case e.Error != "" && (err == nil || !strings.Contains(err.Error(), e.Error)):
				t.Errorf("steps[%d] (%s): error %v, want one with %q", i, step.label(), err, e.Error)
			case e.Error == "" && err != nil:
				t.Fatalf("steps[%d] (%s): %v", i, step.label(), err)
			}
			for _, name := range slices.Sorted(maps.Keys(e.Containers)) {
				h.expect(fmt.Sprintf("steps[%d] (%s): %s", i, step.label(), name), ids, name, e.Containers[name])
			}
			for j, se := range e.Sets {
				h.expectSets(fmt.Sprintf("steps[%d] (%s): sets[%d]", i, step.label(), j), ids, se)
			}
		} else if err != nil {
			t.Fatalf("steps[%d] (%s): %v", i, step.label(), err)
		}
	}
	if next < len(expects) {
		t.Errorf("expect.yaml[%d]: no step %q after the previous one", next, expects[next].After)
	}
}

// play runs one step the way `nriwasm simulate` does: container ids are
// POD-CONTAINER, an unset CPU request is its limit.
func (h *harness) play(step fidelityStep, ids map[string]string) error {
	h.TB.Helper()
	switch {
	case step.Pod != nil:
		p := step.Pod
		ns := p.Namespace
		if ns == "" {
			ns = "default"
		}
		for _, c := range p.Containers {
			q := c.Resources.Requests["cpu"]
			if q == "" {
				q = c.Resources.Limits["cpu"]
			}
			milli, err := milliOf(q)
			if err != nil {
				h.TB.Fatalf("pod %s container %s: %v", p.Name, c.Name, err)
			}
			s := ctr(p.Name+"-"+c.Name, milli).In(ns).OfPod(p.Name).Named(c.Name)
			if len(c.Resources.Requests)+len(c.Resources.Limits) == 0 {
				s.QOS = abi.QOSClass_QOS_CLASS_BEST_EFFORT
			}
			for k, v := range p.Annotations {
				s = s.With(k, v)
			}
			for k, v := range p.Labels {
				s = s.Label(k, v)
			}
			if _, err := h.TryCreate(s); err != nil {
				return err
			}
			ids[c.Name] = s.ID
		}
	case step.Remove != "":
		pod, name, one := strings.Cut(step.Remove, "/")
		for _, id := range append([]string(nil), h.Order...) {
			if c := h.Containers[id]; c.PodSandboxId == pod && (!one || c.Name == name) {
				h.Remove(id)
			}
		}
	default:
		cfg, ok := step.Reconfigure.(string)
		if !ok {
			b, err := yaml.Marshal(step.Reconfigure)
			if err != nil {
				h.TB.Fatal(err)
			}
			cfg = string(b)
		}
		return h.Reconfigure(cfg)
	}
	return nil
}

// milliOf reads a CPU quantity ("", "500m", "2", "1.5").
func milliOf(q string) (int64, error) {
	if q == "" {
		return 0, nil
	}
	if m, ok := strings.CutSuffix(q, "m"); ok {
		var v int64
		_, err := fmt.Sscanf(m, "%d", &v)
		return v, err
	}
	var f float64
	if _, err := fmt.Sscanf(q, "%g", &f); err != nil {
		return 0, fmt.Errorf("cpu %q: %w", q, err)
	}
	return int64(f*1000 + 0.5), nil
}

// cpusOf is what the runtime holds for a container, by name: every CPU
// when the policy left its cpuset alone.
func (h *harness) cpusOf(ids map[string]string, name string) cpuset.Set {
	h.TB.Helper()
	c := h.Containers[ids[name]]
	if c == nil {
		h.TB.Fatalf("no running container %s", name)
	}
	if c.GetAssignment().GetCpusetCpus() == "" {
		var all []uint32
		for _, cpu := range h.Topology.Cpus {
			all = append(all, cpu.Id)
		}
		return cpuset.New(all...)
	}
	return policytest.MustSet(h.TB, c.GetAssignment().GetCpusetCpus())
}

func (h *harness) expect(where string, ids map[string]string, name string, e containerExpect) {
	h.TB.Helper()
	cpus := h.cpusOf(ids, name)
	if e.CPUs != nil && cpus.Size() != *e.CPUs {
		h.TB.Errorf("%s: %d CPUs (%s), want %d", where, cpus.Size(), cpus, *e.CPUs)
	}
	if e.MinCPUs > 0 && cpus.Size() < e.MinCPUs || e.MaxCPUs > 0 && cpus.Size() > e.MaxCPUs {
		h.TB.Errorf("%s: %d CPUs (%s), want %d to %d", where, cpus.Size(), cpus, e.MinCPUs, e.MaxCPUs)
	}
	if e.Cores > 0 {
		cores := map[string]bool{}
		for _, c := range h.Topology.Cpus {
			if cpus.Contains(c.Id) {
				cores[fmt.Sprint(c.ThreadSiblings)] = true
			}
		}
		if len(cores) != e.Cores {
			h.TB.Errorf("%s: CPUs %s on %d cores, want %d", where, cpus, len(cores), e.Cores)
		}
	}
	if got := h.nodesOf(cpus); e.Nodes != "" && !got.Equal(policytest.MustSet(h.TB, e.Nodes)) {
		h.TB.Errorf("%s: CPUs %s on nodes %s, want nodes %s", where, cpus, got, e.Nodes)
	} else if e.NotNodes != "" && got.Intersects(policytest.MustSet(h.TB, e.NotNodes)) {
		h.TB.Errorf("%s: CPUs %s on nodes %s, want none on %s", where, cpus, got, e.NotNodes)
	}
	if e.Mems != "" {
		if got := h.Containers[ids[name]].GetAssignment().GetCpusetMems(); got != e.Mems {
			h.TB.Errorf("%s: mems %q, want %q", where, got, e.Mems)
		}
	}
	if e.Within != "" && !cpus.IsSubsetOf(policytest.MustSet(h.TB, e.Within)) {
		h.TB.Errorf("%s: CPUs %s, want within %s", where, cpus, e.Within)
	}
	for _, set := range slices.Sorted(maps.Keys(e.CountIn)) {
		if got := cpus.Intersection(policytest.MustSet(h.TB, set)).Size(); got != e.CountIn[set] {
			h.TB.Errorf("%s: %d of its CPUs %s in %s, want %d", where, got, cpus, set, e.CountIn[set])
		}
	}
	if e.Same != "" && !cpus.Equal(h.cpusOf(ids, e.Same)) {
		h.TB.Errorf("%s: CPUs %s, want %s's %s", where, cpus, e.Same, h.cpusOf(ids, e.Same))
	}
	if e.Inside != "" && !cpus.IsSubsetOf(h.cpusOf(ids, e.Inside)) {
		h.TB.Errorf("%s: CPUs %s, want inside %s's %s", where, cpus, e.Inside, h.cpusOf(ids, e.Inside))
	}
	for _, o := range e.Disjoint {
		if other := h.cpusOf(ids, o); cpus.Intersects(other) {
			h.TB.Errorf("%s: CPUs %s overlap %s's %s", where, cpus, o, other)
		}
	}
	if e.SameNodes != "" {
		if got, want := h.nodesOf(cpus), h.nodesOf(h.cpusOf(ids, e.SameNodes)); !got.Equal(want) {
			h.TB.Errorf("%s: CPUs %s on nodes %s, want %s's nodes %s", where, cpus, got, e.SameNodes, want)
		}
	}
	for _, o := range e.DisjointNodes {
		if got, other := h.nodesOf(cpus), h.nodesOf(h.cpusOf(ids, o)); got.Intersects(other) {
			h.TB.Errorf("%s: CPUs %s on nodes %s, which overlap %s's nodes %s", where, cpus, got, o, other)
		}
	}
}

func (h *harness) expectSets(where string, ids map[string]string, e setsExpect) {
	h.TB.Helper()
	var union, common cpuset.Set
	for i, name := range e.Of {
		cpus := h.cpusOf(ids, name)
		union = union.Union(cpus)
		if i == 0 {
			common = cpus
		}
		common = common.Intersection(cpus)
	}
	if e.Union != nil && union.Size() != *e.Union {
		h.TB.Errorf("%s: %v hold %s together, want %d CPUs", where, e.Of, union, *e.Union)
	}
	if e.Common != nil && common.Size() != *e.Common {
		h.TB.Errorf("%s: %v all hold %s, want %d CPUs", where, e.Of, common, *e.Common)
	}
}

// nodesOf is the NUMA nodes of cpus.
func (h *harness) nodesOf(cpus cpuset.Set) cpuset.Set {
	var nodes []uint32
	for _, n := range h.Topology.NumaNodes {
		if cpuset.New(n.Cpus...).Intersects(cpus) {
			nodes = append(nodes, n.Id)
		}
	}
	return cpuset.New(nodes...)
}
