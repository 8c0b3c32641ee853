package balloons

import (
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
)

// TestParseMemTypes: values as nri-plugins' libmem.ParseTypeMask takes
// them (comma-separated, trimmed, any case); anything else is refused whole.
func TestParseMemTypes(t *testing.T) {
	for v, want := range map[string]string{
		"dram":            "DRAM",
		"PMEM":            "PMEM",
		"Hbm":             "HBM",
		"pmem,dram":       "DRAM,PMEM",
		" hbm , DRAM ":    "DRAM,HBM",
		"hbm,pmem,dram":   "DRAM,PMEM,HBM",
		"dram,DRAM,dram ": "DRAM",
	} {
		m, err := parseMemTypes(v)
		if err != nil || m.String() != want {
			t.Errorf("parseMemTypes(%q) = %q, %v; want %q", v, m, err, want)
		}
	}
	for _, v := range []string{"", " ", "mixed", "sram", "dram,", ",pmem", "dram;pmem", "dram pmem", "cxl", "normal"} {
		if m, err := parseMemTypes(v); err == nil {
			t.Errorf("parseMemTypes(%q) = %q, want an error", v, m)
		}
	}
}

// TestMemoryTypeWarning: an invalid value is logged naming the container,
// the key and the value, and leaves the type's memoryTypes; memory.preserve
// and pinMemory false read no annotation at all.
func TestMemoryTypeWarning(t *testing.T) {
	rec := recordLog(t)
	pod := &abi.PodSandbox{Annotations: map[string]string{
		containers.KeyMemoryType + "/pod":         "pmem",
		containers.KeyMemoryType + "/container.w": "dram,sram",
	}}
	bt := &btype{BalloonType: &BalloonType{Name: "mem"}, pinMemory: true}
	if m := memoryTypesOf(pod, &abi.Container{Id: "c1", Name: "w"}, bt, false); m != 0 {
		t.Errorf("invalid value gave %q, want none", m)
	}
	if m := memoryTypesOf(pod, &abi.Container{Id: "c2", Name: "x"}, bt, false); m.String() != "PMEM" {
		t.Errorf("pod form gave %q, want PMEM", m)
	}
	if m := memoryTypesOf(pod, &abi.Container{Id: "c3", Name: "w"}, bt, true); m != 0 {
		t.Errorf("memory.preserve: got %q, want none", m)
	}
	bt.pinMemory = false
	if m := memoryTypesOf(pod, &abi.Container{Id: "c4", Name: "w"}, bt, false); m != 0 {
		t.Errorf("pinMemory false: got %q, want none", m)
	}
	want := `WARN container c1: ignoring annotation memory-type.resource-policy.nri.io/container.w="dram,sram": ` +
		`unknown memory type "sram" (want DRAM, PMEM or HBM); balloon type mem's memoryTypes apply`
	if got := strings.Join(rec.msgs, "\n"); got != want {
		t.Errorf("logged\n%s\nwant\n%s", got, want)
	}
}

// TestPinningMemo: a balloon's containers with and without memory types
// share its CPUs and get their own mems; once computed, neither costs an
// allocation.
func TestPinningMemo(t *testing.T) {
	topo := handTopology()
	topo.NumaNodes[0].Distances = []*abi.NodeDistance{{Node: 0, Distance: 10}, {Node: 1, Distance: 17}}
	topo.NumaNodes = append(topo.NumaNodes, &abi.NUMANode{Id: 1, MemoryBytes: 1 << 30, MemoryKind: abi.MemoryKind_MEMORY_KIND_PMEM,
		Distances: []*abi.NodeDistance{{Node: 0, Distance: 17}, {Node: 1, Distance: 10}}})
	ix, err := newTopoIndex(topo)
	if err != nil {
		t.Fatal(err)
	}
	s := &state{ix: ix, pinCPU: true}
	b := &balloon{t: &btype{BalloonType: &BalloonType{MemoryTypes: []MemoryType{"DRAM"}}, pinMemory: true}, cpus: cpuset.New(0, 1, 2)}
	pm, _ := parseMemTypes("pmem")
	dp, _ := parseMemTypes("dram,pmem")
	plain, pmem, both := &container{b: b}, &container{b: b, memTypes: pm}, &container{b: b, memTypes: dp}
	for _, tc := range []struct {
		c          *container
		cpus, mems string
	}{{plain, "0-2", "0"}, {pmem, "0-2", "1"}, {both, "0-2", "0-1"}} {
		if p := s.pinOf(tc.c); p.cpus != tc.cpus || p.mems != tc.mems {
			t.Errorf("memory types %q: got %s/%s, want %s/%s", tc.c.memTypes, p.cpus, p.mems, tc.cpus, tc.mems)
		}
		if n := testing.AllocsPerRun(100, func() { s.pinOf(tc.c) }); n != 0 {
			t.Errorf("memory types %q: %v allocations per memoized pinning", tc.c.memTypes, n)
		}
	}
	s.setCPUs(b, cpuset.New(3, 4))
	if b.pin != [pinSlots]*pinned{} {
		t.Errorf("setCPUs kept memoized pinnings")
	}
	if p := s.pinOf(pmem); p.cpus != "3-4" || p.mems != "1" {
		t.Errorf("after setCPUs: pmem got %s/%s, want 3-4/1", p.cpus, p.mems)
	}
}
