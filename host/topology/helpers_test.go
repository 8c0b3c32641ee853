package topology_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// write generates m's sysfs tree in a fresh temporary directory.
func write(tb testing.TB, m topologytest.Machine) string {
	tb.Helper()
	dir := tempDir(tb)
	if err := m.Write(dir); err != nil {
		tb.Fatalf("write fixture: %v", err)
	}
	return dir
}

// tempDir is tb.TempDir, put in /dev/shm when TMPDIR is unset and /dev/shm
// is a writable directory. The 4,096-CPU fixture has ~170,000 files; on a
// disk-backed /tmp writing and removing them can take a minute rather than
// seconds.
func tempDir(tb testing.TB) string {
	tb.Helper()
	if os.Getenv("TMPDIR") == "" {
		if d, err := os.MkdirTemp("/dev/shm", "topology-probe-"); err == nil {
			os.Remove(d)
			tb.Setenv("TMPDIR", "/dev/shm")
		}
	}
	return tb.TempDir()
}

func discover(tb testing.TB, root string, opts ...topology.Option) *abi.Topology {
	tb.Helper()
	topo, err := topology.Discover(root, opts...)
	if err != nil {
		tb.Fatalf("Discover(%s): %v", root, err)
	}
	checkInvariants(tb, topo)
	return topo
}

// checkInvariants checks what must hold for any topology: sorted lists,
// and every id one message names exists where it points.
func checkInvariants(tb testing.TB, topo *abi.Topology) {
	tb.Helper()
	if len(topo.Cpus) == 0 {
		tb.Errorf("no CPUs")
	}
	nodes := map[uint32]*abi.NUMANode{}
	for i, n := range topo.NumaNodes {
		if i > 0 && topo.NumaNodes[i-1].Id >= n.Id {
			tb.Errorf("nodes not sorted at %d", n.Id)
		}
		nodes[n.Id] = n
		if !slices.IsSorted(n.Cpus) {
			tb.Errorf("node %d CPUs not sorted", n.Id)
		}
		if len(n.Distances) > 0 && len(n.Distances) != len(topo.NumaNodes) {
			tb.Errorf("node %d: %d distances for %d nodes", n.Id, len(n.Distances), len(topo.NumaNodes))
		}
	}
	cpus := map[uint32]*abi.CPU{}
	for i, c := range topo.Cpus {
		if i > 0 && topo.Cpus[i-1].Id >= c.Id {
			tb.Errorf("CPUs not sorted at %d", c.Id)
		}
		cpus[c.Id] = c
		n := nodes[c.NumaNode]
		if n == nil {
			tb.Errorf("cpu%d: node %d missing", c.Id, c.NumaNode)
		} else if _, ok := slices.BinarySearch(n.Cpus, c.Id); !ok {
			tb.Errorf("cpu%d: not in node %d's CPUs %v", c.Id, n.Id, n.Cpus)
		}
		if _, ok := slices.BinarySearch(c.ThreadSiblings, c.Id); !ok || !slices.IsSorted(c.ThreadSiblings) {
			tb.Errorf("cpu%d: thread siblings %v", c.Id, c.ThreadSiblings)
		}
		prevLevel := uint32(0)
		for _, id := range c.CacheIds {
			if int(id) >= len(topo.Caches) {
				tb.Errorf("cpu%d: cache %d missing", c.Id, id)
				continue
			}
			k := topo.Caches[id]
			if _, ok := slices.BinarySearch(k.Cpus, c.Id); !ok {
				tb.Errorf("cpu%d: not in its cache %d's CPUs", c.Id, id)
			}
			if k.Level < prevLevel {
				tb.Errorf("cpu%d: cache ids not innermost first: %v", c.Id, c.CacheIds)
			}
			prevLevel = k.Level
		}
	}
	for i, k := range topo.Caches {
		if k.Id != uint32(i) {
			tb.Errorf("cache %d has id %d", i, k.Id)
		}
		for _, c := range k.Cpus {
			if cpus[c] == nil {
				tb.Errorf("cache %d: cpu%d not online", k.Id, c)
			}
		}
	}
	for _, c := range topo.OfflineCpus {
		if cpus[c] != nil {
			tb.Errorf("cpu%d both online and offline", c)
		}
	}
	if !slices.IsSortedFunc(topo.PciDevices, func(a, b *abi.PCIDevice) int { return strings.Compare(a.Address, b.Address) }) {
		tb.Errorf("PCI devices not sorted")
	}
	if !slices.IsSortedFunc(topo.NetworkInterfaces, func(a, b *abi.NetworkInterface) int { return strings.Compare(a.Name, b.Name) }) {
		tb.Errorf("network interfaces not sorted")
	}
}

func cpuByID(tb testing.TB, topo *abi.Topology, id uint32) *abi.CPU {
	tb.Helper()
	for _, c := range topo.Cpus {
		if c.Id == id {
			return c
		}
	}
	tb.Fatalf("cpu%d not found", id)
	return nil
}

func pciByAddr(tb testing.TB, topo *abi.Topology, addr string) *abi.PCIDevice {
	tb.Helper()
	for _, d := range topo.PciDevices {
		if d.Address == addr {
			return d
		}
	}
	tb.Fatalf("PCI %s not found", addr)
	return nil
}

func netIf(tb testing.TB, topo *abi.Topology, name string) *abi.NetworkInterface {
	tb.Helper()
	for _, n := range topo.NetworkInterfaces {
		if n.Name == name {
			return n
		}
	}
	tb.Fatalf("interface %s not found", name)
	return nil
}

// cacheOf returns the cache of a CPU at a level and type.
func cacheOf(tb testing.TB, topo *abi.Topology, cpu uint32, level uint32, typ abi.CacheType) *abi.Cache {
	tb.Helper()
	for _, id := range cpuByID(tb, topo, cpu).CacheIds {
		if k := topo.Caches[id]; k.Level == level && k.Type == typ {
			return k
		}
	}
	tb.Fatalf("cpu%d: no L%d %v cache", cpu, level, typ)
	return nil
}

// countCaches counts cache instances per level (L1 data and instruction
// together).
func countCaches(topo *abi.Topology) map[uint32]int {
	n := map[uint32]int{}
	for _, k := range topo.Caches {
		n[k.Level]++
	}
	return n
}

func distinct[T comparable](topo *abi.Topology, key func(*abi.CPU) T) int {
	seen := map[T]bool{}
	for _, c := range topo.Cpus {
		seen[key(c)] = true
	}
	return len(seen)
}

func u32p(v uint32) *uint32 { return &v }

func ptrEq(a, b *uint32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func wantSlice(t *testing.T, what string, got []uint32, want ...uint32) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantDistances(t *testing.T, n *abi.NUMANode, want ...uint32) {
	t.Helper()
	var got []uint32
	for i, d := range n.Distances {
		if d.Node != uint32(i) {
			t.Errorf("node %d distance %d is to node %d", n.Id, i, d.Node)
		}
		got = append(got, d.Distance)
	}
	wantSlice(t, "distances", got, want...)
}

func wantPCI(t *testing.T, topo *abi.Topology, addr string, node *uint32, root, driver string) {
	t.Helper()
	d := pciByAddr(t, topo, addr)
	if !ptrEq(d.NumaNode, node) || d.PcieRoot != root || d.Driver != driver {
		t.Errorf("PCI %s: node %v root %q driver %q; want %v %q %q", addr, d.NumaNode, d.PcieRoot, d.Driver, node, root, driver)
	}
}

func wantNIC(t *testing.T, topo *abi.Topology, name, pci string, node *uint32, root string, virtual, up bool) {
	t.Helper()
	n := netIf(t, topo, name)
	if n.PciAddress != pci || !ptrEq(n.NumaNode, node) || n.PcieRoot != root || n.Virtual != virtual || n.Up != up {
		t.Errorf("%s: pci %q node %v root %q virtual %v up %v; want %q %v %q %v %v",
			name, n.PciAddress, n.NumaNode, n.PcieRoot, n.Virtual, n.Up, pci, node, root, virtual, up)
	}
	if n.Mac == "" || n.Mtu == 0 || len(n.Addresses) != 0 {
		t.Errorf("%s: mac %q mtu %d addresses %v", name, n.Mac, n.Mtu, n.Addresses)
	}
}
