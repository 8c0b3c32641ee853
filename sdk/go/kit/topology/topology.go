// Package topology indexes the node topology a policy receives in its
// InitRequest: for each online CPU its core (thread siblings), die, package
// and NUMA node; each node's CPUs, memory and SLIT distances; the caches,
// in the order sysfs numbers them per CPU; the CPUs close to each PCI
// device and network interface. Priorities classifies the CPUs as
// nri-plugins' CPU allocator does (high, normal, low).
//
// Build an Index once in Init (New checks the topology) and ask it during
// placement; every answer is deterministic and every list sorted.
package topology

import (
	"cmp"
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// MaxCPUID bounds a CPU id the index accepts: ids are array indexes, and no
// machine has a million CPUs.
const MaxCPUID = 1<<20 - 1

// Distances a topology may leave out: a node to itself is near, a pair the
// topology gives no distance for is far (the SLIT's maximum).
const (
	LocalDistance   = 10
	UnknownDistance = 255
)

// CPU is what the index knows about one online CPU.
type CPU struct {
	ID, Package, Die, Node uint32
	// Core is the lowest id of the CPU's thread siblings: it names the core.
	Core uint32
	// Threads is how many hardware threads the core has.
	Threads  int
	CoreType abi.CoreType
	Isolated bool
	// CacheIDs are the ids of the caches the CPU uses (abi.Cache.Id).
	CacheIDs []uint32
}

// Cache is one cache of the topology, restricted to online CPUs.
type Cache struct {
	ID, Level uint32
	Type      abi.CacheType
	// SysfsID is the kernel's id of the cache (its cache/indexN/id), the
	// order the kernel numbers a level's caches in; ID numbers them by
	// first CPU.
	SysfsID uint32
	// CPUs are the online CPUs that share the cache.
	CPUs  cpuset.Set
	first uint32 // the lowest of CPUs
}

// Index answers questions about one topology. It is read-only after New.
type Index struct {
	cpus     []CPU // by id; the online ones have online[id]
	isOnline []bool
	online   cpuset.Set
	isolated cpuset.Set
	nodes    map[uint32]*abi.NUMANode
	nodeIDs  []uint32
	nodeCPUs map[uint32]cpuset.Set
	cores    map[uint32]cpuset.Set // by core (lowest sibling id)
	caches   []Cache
	pci, net map[string]cpuset.Set
}

// New indexes t. It refuses, as INVALID_ARGUMENT naming topology.cpus, a
// topology without online CPUs or with a CPU id above MaxCPUID.
func New(t *abi.Topology) (*Index, error) {
	if len(t.GetCpus()) == 0 {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "topology.cpus", "the topology lists no online CPU")
	}
	maxID := uint32(0)
	for _, c := range t.GetCpus() {
		maxID = max(maxID, c.Id)
	}
	if maxID > MaxCPUID {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "topology.cpus", "CPU id %d is out of range (at most %d)", maxID, MaxCPUID)
	}
	ix := &Index{
		cpus: make([]CPU, maxID+1), isOnline: make([]bool, maxID+1),
		nodes: map[uint32]*abi.NUMANode{}, nodeCPUs: map[uint32]cpuset.Set{}, cores: map[uint32]cpuset.Set{},
	}
	var online, isolated []uint32
	perNode, perCore := map[uint32][]uint32{}, map[uint32][]uint32{}
	for _, c := range t.GetCpus() {
		info := CPU{ID: c.Id, Package: c.PackageId, Die: c.DieId, Node: c.NumaNode, Core: c.Id, Threads: 1,
			CoreType: c.CoreType, Isolated: c.Isolated, CacheIDs: c.GetCacheIds()}
		if sib := c.GetThreadSiblings(); len(sib) > 0 {
			info.Core = min(sib[0], c.Id)
			info.Threads = len(sib)
		}
		ix.cpus[c.Id], ix.isOnline[c.Id] = info, true
		online = append(online, c.Id)
		perNode[c.NumaNode] = append(perNode[c.NumaNode], c.Id)
		perCore[info.Core] = append(perCore[info.Core], c.Id)
		if c.Isolated {
			isolated = append(isolated, c.Id)
		}
	}
	ix.online, ix.isolated = cpuset.New(online...), cpuset.New(isolated...)
	for n, ids := range perNode {
		ix.nodeCPUs[n] = cpuset.New(ids...)
	}
	for k, ids := range perCore {
		ix.cores[k] = cpuset.New(ids...)
	}
	var ids []uint32
	for _, n := range t.GetNumaNodes() {
		ix.nodes[n.Id] = n
		ids = append(ids, n.Id)
	}
	ix.nodeIDs = cpuset.New(ids...).Sorted()
	ix.indexCaches(t)
	ix.indexDevices(t)
	return ix, nil
}

// MaxID is the highest online CPU id: a slice of MaxID()+1 holds every CPU.
func (ix *Index) MaxID() uint32 { return uint32(len(ix.cpus) - 1) }

// CPU describes an online CPU; false for an id that is not online.
func (ix *Index) CPU(id uint32) (CPU, bool) {
	if !ix.IsOnline(id) {
		return CPU{}, false
	}
	return ix.cpus[id], true
}

// IsOnline tells whether CPU id is online (listed in the topology).
func (ix *Index) IsOnline(id uint32) bool { return int(id) < len(ix.isOnline) && ix.isOnline[id] }

// Online are the online CPUs.
func (ix *Index) Online() cpuset.Set { return ix.online }

// Isolated are the kernel-isolated (isolcpus) online CPUs.
func (ix *Index) Isolated() cpuset.Set { return ix.isolated }

// Siblings are the online threads of CPU id's core, id included; empty for
// a CPU that is not online.
func (ix *Index) Siblings(id uint32) cpuset.Set {
	if !ix.IsOnline(id) {
		return cpuset.Set{}
	}
	return ix.cores[ix.cpus[id].Core]
}

// SingleThreads keeps one thread, the lowest id, of each core in cpus (as
// nri-plugins' SingleThreadForCPUs, for hide-hyperthreads). A CPU that is
// not online counts as a core of its own.
func (ix *Index) SingleThreads(cpus cpuset.Set) cpuset.Set {
	seen := make(map[uint32]bool, cpus.Size())
	keep := make([]uint32, 0, cpus.Size())
	for id := range cpus.All() {
		core := id
		if ix.IsOnline(id) {
			core = ix.cpus[id].Core
		}
		if !seen[core] {
			seen[core] = true
			keep = append(keep, id)
		}
	}
	return cpuset.New(keep...)
}

// PackagesOf are the packages of the online CPUs among cpus.
func (ix *Index) PackagesOf(cpus cpuset.Set) cpuset.Set {
	var ids []uint32
	for id := range cpus.All() {
		if ix.IsOnline(id) {
			ids = append(ids, ix.cpus[id].Package)
		}
	}
	return cpuset.New(ids...)
}

// NodeIDs are the NUMA nodes the topology lists, sorted, with or without
// CPUs or memory.
func (ix *Index) NodeIDs() []uint32 { return ix.nodeIDs }

// Node is NUMA node n as the topology lists it; nil if it does not.
func (ix *Index) Node(n uint32) *abi.NUMANode { return ix.nodes[n] }

// NodeCPUs are the online CPUs of NUMA node n.
func (ix *Index) NodeCPUs(n uint32) cpuset.Set { return ix.nodeCPUs[n] }

// Distance is the SLIT distance from node a to node b. A distance the
// topology leaves out is LocalDistance from a node to itself and
// UnknownDistance otherwise.
func (ix *Index) Distance(a, b uint32) uint32 {
	for _, d := range ix.nodes[a].GetDistances() {
		if d.Node == b {
			return d.Distance
		}
	}
	if a == b {
		return LocalDistance
	}
	return UnknownDistance
}

// HasMemory tells whether node n has memory.
func (ix *Index) HasMemory(n uint32) bool { return ix.nodes[n].GetMemoryBytes() > 0 }

// MemoryKind is node n's kind of memory (UNSPECIFIED for a node the
// topology does not list).
func (ix *Index) MemoryKind(n uint32) abi.MemoryKind { return ix.nodes[n].GetMemoryKind() }

// Caches are the topology's caches that hold an online CPU, in topology
// order.
func (ix *Index) Caches() []Cache { return ix.caches }

// indexCaches keeps each cache's online CPUs. Filtered id by id:
// intersecting each cache with all online CPUs would cost caches × CPUs
// (tens of millions of steps on 4,096 CPUs).
func (ix *Index) indexCaches(t *abi.Topology) {
	ix.caches = make([]Cache, 0, len(t.GetCaches()))
	for _, c := range t.GetCaches() {
		online := make([]uint32, 0, len(c.Cpus))
		for _, id := range c.Cpus {
			if ix.IsOnline(id) {
				online = append(online, id)
			}
		}
		if len(online) > 0 {
			ix.caches = append(ix.caches, Cache{ID: c.Id, Level: c.Level, Type: c.Type, SysfsID: c.GetSysfsId(), CPUs: cpuset.New(online...), first: slices.Min(online)})
		}
	}
}

// cacheTypeOrder ranks cache types within a level the way the kernel
// numbers a CPU's cache/indexM entries: data before instruction (the split
// L1), then unified; a cache of unknown type last.
func cacheTypeOrder(t abi.CacheType) int {
	switch t {
	case abi.CacheType_CACHE_TYPE_DATA:
		return 0
	case abi.CacheType_CACHE_TYPE_INSTRUCTION:
		return 1
	case abi.CacheType_CACHE_TYPE_UNIFIED:
		return 2
	}
	return 3
}

// CacheIndex is the cache sysfs names /sys/devices/system/cpu/cpuN/cache/indexM;
// false when CPU N is offline or has fewer than M+1 caches.
//
// The topology does not carry sysfs' index numbers, so they are rebuilt:
// the caches listing CPU N, ordered by level, then data, instruction,
// unified, then first CPU, are its index0, index1, …. That is how the
// kernel numbers them on x86 (cpuid leaf 4 enumerates L1d, L1i, L2, L3:
// index0-3) and arm64 (level by level, a split level data first). It
// assumes every cache the kernel lists for the CPU is in the topology and
// that a CPU has one cache per level and type; a kernel that numbers
// otherwise would resolve indexM to another of the CPU's caches.
func (ix *Index) CacheIndex(cpu, index uint32) (Cache, bool) {
	var mine []*Cache
	for i := range ix.caches {
		if c := &ix.caches[i]; c.CPUs.Contains(cpu) {
			mine = append(mine, c)
		}
	}
	if int(index) >= len(mine) {
		return Cache{}, false
	}
	slices.SortStableFunc(mine, func(a, b *Cache) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(cacheTypeOrder(a.Type), cacheTypeOrder(b.Type)), cmp.Compare(a.first, b.first))
	})
	return *mine[index], true
}

// indexDevices records the CPUs close to each PCI device (its local CPUs,
// else its NUMA node's) and network interface (its NUMA node's, else its
// PCI device's). Every device the topology lists is recorded, with no CPUs
// where the topology gives it no affinity.
func (ix *Index) indexDevices(t *abi.Topology) {
	ix.pci, ix.net = map[string]cpuset.Set{}, map[string]cpuset.Set{}
	for _, p := range t.GetPciDevices() {
		switch {
		case len(p.LocalCpus) > 0:
			ix.pci[p.Address] = ix.online.Intersection(cpuset.New(p.LocalCpus...))
		case p.NumaNode != nil:
			ix.pci[p.Address] = ix.nodeCPUs[*p.NumaNode]
		default:
			ix.pci[p.Address] = cpuset.Set{}
		}
	}
	for _, n := range t.GetNetworkInterfaces() {
		switch {
		case n.NumaNode != nil:
			ix.net[n.Name] = ix.nodeCPUs[*n.NumaNode]
		case n.PciAddress != "":
			ix.net[n.Name] = ix.pci[n.PciAddress]
		default:
			ix.net[n.Name] = cpuset.Set{}
		}
	}
}

// PCIDeviceCPUs are the online CPUs close to the PCI function at address
// ("0000:3b:00.0"); false when the topology lists no such device, an empty
// set when it has no CPU affinity.
func (ix *Index) PCIDeviceCPUs(address string) (cpuset.Set, bool) {
	cpus, ok := ix.pci[address]
	return cpus, ok
}

// NetworkInterfaceCPUs are the online CPUs close to network interface
// name; false when the topology lists no such interface, an empty set when
// it has no CPU affinity.
func (ix *Index) NetworkInterfaceCPUs(name string) (cpuset.Set, bool) {
	cpus, ok := ix.net[name]
	return cpus, ok
}
