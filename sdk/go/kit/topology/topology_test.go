package topology_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/topology"
)

// smallMachine is two packages of two 2-thread cores, a NUMA node each, and
// a CPU-less HBM node 2; CPU 7 is offline. CPU i's sibling is i^1.
// Per core: an L1d (listed after the L1i on purpose) and an L1i; per
// package: a unified L2.
func smallMachine() *abi.Topology {
	t := &abi.Topology{}
	for id := uint32(0); id < 7; id++ {
		t.Cpus = append(t.Cpus, &abi.CPU{Id: id, PackageId: id / 4, NumaNode: id / 4, ThreadSiblings: []uint32{id &^ 1, id | 1},
			Isolated: id == 6})
	}
	t.NumaNodes = []*abi.NUMANode{
		{Id: 0, MemoryBytes: 1 << 30, Cpus: []uint32{0, 1, 2, 3}, Distances: []*abi.NodeDistance{{Node: 0, Distance: 10}, {Node: 1, Distance: 21}}},
		{Id: 1, MemoryBytes: 1 << 30, Cpus: []uint32{4, 5, 6}},
		{Id: 2, MemoryBytes: 1 << 30, MemoryKind: abi.MemoryKind_MEMORY_KIND_HBM, Distances: []*abi.NodeDistance{{Node: 0, Distance: 14}}},
		{Id: 3},
	}
	id := uint32(100)
	for core := uint32(0); core < 8; core += 2 {
		t.Caches = append(t.Caches,
			&abi.Cache{Id: id, Level: 1, Type: abi.CacheType_CACHE_TYPE_INSTRUCTION, Cpus: []uint32{core, core + 1}},
			&abi.Cache{Id: id + 1, Level: 1, Type: abi.CacheType_CACHE_TYPE_DATA, Cpus: []uint32{core, core + 1}})
		id += 2
	}
	t.Caches = append(t.Caches,
		&abi.Cache{Id: 200, Level: 2, Type: abi.CacheType_CACHE_TYPE_UNIFIED, Cpus: []uint32{0, 1, 2, 3}},
		&abi.Cache{Id: 201, Level: 2, Type: abi.CacheType_CACHE_TYPE_UNIFIED, Cpus: []uint32{4, 5, 6, 7}})
	one := uint32(1)
	t.PciDevices = []*abi.PCIDevice{
		{Address: "0000:3b:00.0", LocalCpus: []uint32{2, 3, 7}},
		{Address: "0000:5e:00.0", NumaNode: &one},
		{Address: "0000:00:1f.0"},
	}
	t.NetworkInterfaces = []*abi.NetworkInterface{{Name: "eth0", PciAddress: "0000:3b:00.0"}, {Name: "ib0", NumaNode: &one}, {Name: "lo"}}
	return t
}

func mustIndex(t *testing.T) *topology.Index {
	t.Helper()
	ix, err := topology.New(smallMachine())
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestNewRefusesBadTopologies(t *testing.T) {
	for name, tc := range map[string]struct {
		topo *abi.Topology
		want string
	}{
		"no CPU":     {&abi.Topology{}, "no online CPU"},
		"id too big": {&abi.Topology{Cpus: []*abi.CPU{{Id: topology.MaxCPUID + 1}}}, "out of range"},
	} {
		_, err := topology.New(tc.topo)
		var pe *abi.PolicyError
		if !errors.As(err, &pe) || pe.Code != abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || pe.Field != "topology.cpus" || !strings.Contains(pe.Message, tc.want) {
			t.Errorf("%s: %v; want an INVALID_ARGUMENT on topology.cpus with %q", name, err, tc.want)
		}
	}
}

func TestCPUsAndCores(t *testing.T) {
	ix := mustIndex(t)
	if got := ix.Online().String(); got != "0-6" {
		t.Errorf("online %s, want 0-6", got)
	}
	if got := ix.Isolated().String(); got != "6" {
		t.Errorf("isolated %s, want 6", got)
	}
	if c, ok := ix.CPU(5); !ok || c.Core != 4 || c.Threads != 2 || c.Package != 1 || c.Node != 1 {
		t.Errorf("CPU 5 = %+v, %v; want core 4, 2 threads, package 1, node 1", c, ok)
	}
	if _, ok := ix.CPU(7); ok {
		t.Error("offline CPU 7 is described")
	}
	if _, ok := ix.CPU(1 << 19); ok {
		t.Error("an id past the table is described")
	}
	if got := ix.Siblings(3).String(); got != "2-3" {
		t.Errorf("siblings of 3: %s, want 2-3", got)
	}
	if got := ix.Siblings(6).String(); got != "6" {
		t.Errorf("siblings of 6 (its sibling 7 offline): %s, want 6", got)
	}
	if got := ix.SingleThreads(cpuset.MustParse("1-6,9")).String(); got != "1-2,4,6,9" {
		t.Errorf("single threads of 1-6,9: %s, want 1-2,4,6,9", got)
	}
	if got := ix.PackagesOf(cpuset.MustParse("3-4,7")).String(); got != "0-1" {
		t.Errorf("packages of 3-4: %s, want 0-1", got)
	}
}

func TestNodes(t *testing.T) {
	ix := mustIndex(t)
	if got := cpuset.New(ix.NodeIDs()...).String(); got != "0-3" {
		t.Errorf("nodes %s, want 0-3", got)
	}
	if got := ix.NodeCPUs(1).String(); got != "4-6" {
		t.Errorf("node 1's CPUs %s, want 4-6", got)
	}
	for _, tc := range []struct{ a, b, want uint32 }{
		{0, 1, 21}, {0, 0, 10}, {2, 0, 14},
		{1, 1, topology.LocalDistance}, {1, 0, topology.UnknownDistance}, {9, 9, topology.LocalDistance},
	} {
		if got := ix.Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance %d→%d = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if !ix.HasMemory(2) || ix.HasMemory(3) || ix.HasMemory(9) {
		t.Error("memory: want node 2 with, nodes 3 and 9 without")
	}
	if ix.MemoryKind(2) != abi.MemoryKind_MEMORY_KIND_HBM || ix.MemoryKind(0) != abi.MemoryKind_MEMORY_KIND_UNSPECIFIED {
		t.Errorf("memory kinds %v, %v; want HBM, unspecified", ix.MemoryKind(2), ix.MemoryKind(0))
	}
}

// TestCacheIndex: sysfs' indexM order is level, then data before
// instruction, whatever order the topology lists them in.
func TestCacheIndex(t *testing.T) {
	ix := mustIndex(t)
	for _, tc := range []struct {
		cpu, index uint32
		id         uint32
		cpus       string
	}{
		{2, 0, 103, "2-3"}, {2, 1, 102, "2-3"}, {2, 2, 200, "0-3"}, {6, 2, 201, "4-6"},
	} {
		c, ok := ix.CacheIndex(tc.cpu, tc.index)
		if !ok || c.ID != tc.id || c.CPUs.String() != tc.cpus {
			t.Errorf("cpu%d/cache/index%d = %+v, %v; want cache %d on %s", tc.cpu, tc.index, c, ok, tc.id, tc.cpus)
		}
	}
	if _, ok := ix.CacheIndex(2, 3); ok {
		t.Error("cpu2 has an index3")
	}
	if _, ok := ix.CacheIndex(7, 0); ok {
		t.Error("offline cpu7 has an index0")
	}
	if n := len(ix.Caches()); n != 10 {
		t.Errorf("%d caches, want 10", n)
	}
}

func TestDevices(t *testing.T) {
	ix := mustIndex(t)
	for _, tc := range []struct {
		name   string
		get    func(string) (cpuset.Set, bool)
		cpus   string
		listed bool
	}{
		{"0000:3b:00.0", ix.PCIDeviceCPUs, "2-3", true}, // local CPUs, online only
		{"0000:5e:00.0", ix.PCIDeviceCPUs, "4-6", true}, // its node's
		{"0000:00:1f.0", ix.PCIDeviceCPUs, "", true},
		{"0000:99:00.0", ix.PCIDeviceCPUs, "", false},
		{"eth0", ix.NetworkInterfaceCPUs, "2-3", true}, // its PCI device's
		{"ib0", ix.NetworkInterfaceCPUs, "4-6", true},
		{"lo", ix.NetworkInterfaceCPUs, "", true},
		{"wlan0", ix.NetworkInterfaceCPUs, "", false},
	} {
		cpus, ok := tc.get(tc.name)
		if cpus.String() != tc.cpus || ok != tc.listed {
			t.Errorf("%s: %s, %v; want %q, %v", tc.name, cpus, ok, tc.cpus, tc.listed)
		}
	}
}
