package balloons

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/topology"
)

// cpuInfo is what allocation needs to know about one online CPU. The group
// keys (die, core, l2) are node-wide unique indexes.
type cpuInfo struct {
	pkg, die, node, core, l2 int32
}

// topoIndex indexes the topology Init carried: the kit's index (nodes,
// distances, caches, devices) and the group keys allocation walks.
type topoIndex struct {
	*topology.Index
	cpus   []cpuInfo // by CPU id; only the online ones are filled in
	online cpuset.Set
	// classPCI are the PCI functions' class devices: the function's
	// address by CLASS/NAME (PCIDevice.class_devices, ABI v1.5).
	classPCI map[string]string
	// hostMinor is Init's host_abi_minor: below abi.MinorClassDevices
	// the host lists no class devices.
	hostMinor uint32
	// isIsolated marks the isolated CPUs, by id.
	isIsolated []bool
	// mems memoizes memsList by NUMA nodes and memory types.
	mems map[memsKey]string
	// onlineIDs are the online CPUs, sorted.
	onlineIDs []uint32
	isolated  cpuset.Set
	// prio are the online CPUs of each of nri-plugins' CPU priority
	// classes (preferCoreType's "performance cores" are the high ones,
	// its "efficient cores" the low ones).
	prio [topology.NumPriorities]cpuset.Set
	// cores lists each core's threads, by core key.
	cores [][]uint32
	// dims are how many cores, L2 caches, nodes, dies and packages the
	// group keys range over.
	dims struct{ core, l2, node, die, pkg int }
	// scratch counts a balloon's CPUs during one allocation (zero between).
	scratch *counts
	// groups are, per level, the CPUs of each group (by group key).
	groups map[Level]map[int32]cpuset.Set
	// tree is nri-plugins' CPU tree, where a resize picks its CPUs.
	tree *cpuTree
	// cands and from are inflate's scratch lists of CPU ids; isCand marks
	// the cands (false between calls). released, picked and taken are
	// deflate's.
	cands, from, released, picked []uint32
	isCand, taken                 []bool
}

func newTopoIndex(t *abi.Topology) (*topoIndex, error) {
	kit, err := topology.New(t)
	if err != nil {
		return nil, err
	}
	maxID := kit.MaxID()
	ix := &topoIndex{Index: kit, cpus: make([]cpuInfo, maxID+1), isIsolated: make([]bool, maxID+1), classPCI: map[string]string{}}
	for _, d := range t.GetPciDevices() {
		for _, c := range d.GetClassDevices() {
			ix.classPCI[c] = d.GetAddress()
		}
	}
	l2 := map[uint32]bool{}
	for _, c := range t.GetCaches() {
		if c.Level == 2 {
			l2[c.Id] = true
		}
	}
	dies, cores, l2s := map[[2]uint32]int32{}, map[uint32]int32{}, map[uint32]int32{}
	key := func(m map[uint32]int32, k uint32) int32 {
		if v, ok := m[k]; ok {
			return v
		}
		m[k] = int32(len(m))
		return m[k]
	}
	ix.online, ix.isolated = kit.Online(), kit.Isolated()
	_, ix.prio = topology.Priorities(t, ix.online)
	ix.onlineIDs = ix.online.Sorted()
	online := ix.onlineIDs
	for _, tc := range t.GetCpus() { // topology order numbers the group keys
		id := tc.Id
		c, _ := kit.CPU(id)
		d, ok := dies[[2]uint32{c.Package, c.Die}]
		if !ok {
			d = int32(len(dies))
			dies[[2]uint32{c.Package, c.Die}] = d
		}
		info := cpuInfo{pkg: int32(c.Package), die: d, node: int32(c.Node), core: key(cores, c.Core), l2: -1}
		for _, id := range c.CacheIDs {
			if l2[id] {
				info.l2 = key(l2s, id)
			}
		}
		if int(info.core) == len(ix.cores) {
			ix.cores = append(ix.cores, nil)
		}
		ix.cores[info.core] = append(ix.cores[info.core], id)
		ix.cpus[id] = info
		ix.isIsolated[id] = c.Isolated
	}
	ix.dims.core, ix.dims.l2, ix.dims.die = len(cores), len(l2s), len(dies)
	for _, id := range online {
		ix.dims.node = max(ix.dims.node, int(ix.cpus[id].node)+1)
		ix.dims.pkg = max(ix.dims.pkg, int(ix.cpus[id].pkg)+1)
	}
	if ix.dims.node > 1<<16 || ix.dims.pkg > 1<<16 {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "topology.cpus", "NUMA node or package id out of range")
	}
	ix.scratch = ix.newCounts()
	ix.tree = newCPUTree(ix, kit, t)
	ix.isCand = make([]bool, maxID+1)
	ix.groups = map[Level]map[int32]cpuset.Set{}
	for _, lvl := range []Level{LevelSystem, LevelPackage, LevelDie, LevelNUMA, LevelL2Cache, LevelCore} {
		byKey := map[int32][]uint32{}
		for _, id := range online {
			k := ix.groupKey(lvl, id)
			byKey[k] = append(byKey[k], id)
		}
		ix.groups[lvl] = map[int32]cpuset.Set{}
		for k, ids := range byKey {
			ix.groups[lvl][k] = cpuset.New(ids...)
		}
	}
	return ix, nil
}

// groupKey is CPU id's group at a level.
func (ix *topoIndex) groupKey(lvl Level, id uint32) int32 {
	c := ix.cpus[id]
	switch lvl {
	case LevelPackage:
		return c.pkg
	case LevelDie:
		return c.die
	case LevelNUMA:
		return c.node
	case LevelL2Cache:
		if c.l2 >= 0 {
			return c.l2
		}
		return -1 - c.core
	case LevelCore:
		return c.core
	}
	return 0
}

// within returns the CPUs of every group at lvl that holds one of cpus,
// and those groups' keys, sorted.
func (ix *topoIndex) within(lvl Level, cpus cpuset.Set) (cpuset.Set, []int32) {
	keys := make([]int32, 0, cpus.Size())
	for id := range cpus.All() {
		keys = append(keys, ix.groupKey(lvl, id))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var out cpuset.Set
	for _, k := range keys {
		out = out.Union(ix.groups[lvl][k])
	}
	return out, keys
}

// nodesOf are the NUMA nodes of cpus. Up to 64 nodes they are collected
// in a bit mask: one pass, nothing to sort.
func (ix *topoIndex) nodesOf(cpus cpuset.Set) cpuset.Set {
	if ix.dims.node <= 64 {
		var mask uint64
		for id := range cpus.All() {
			mask |= 1 << uint(ix.cpus[id].node)
		}
		ids := make([]uint32, 0, bits.OnesCount64(mask))
		for ; mask != 0; mask &= mask - 1 {
			ids = append(ids, uint32(bits.TrailingZeros64(mask)))
		}
		return cpuset.New(ids...)
	}
	var ids []uint32
	for id := range cpus.All() {
		if n := uint32(ix.cpus[id].node); len(ids) == 0 || ids[len(ids)-1] != n {
			ids = append(ids, n)
		}
	}
	return cpuset.New(ids...)
}

// coreTypeCPUs are the CPUs of a core type as nri-plugins' balloons reads
// preferCoreType (its virtual devices "performance cores" and "efficient
// cores", balloons-policy.go): the CPU allocator's high and low priority
// classes (topology.Priorities), not the core types alone. On a hybrid
// machine whose cores share one base frequency and no energy-performance
// preference, the performance cores are normal priority, so "performance"
// is no CPU, as there; efficient cores are always low.
func (ix *topoIndex) coreTypeCPUs(t CoreType) cpuset.Set {
	if t == "efficient" {
		return ix.prio[topology.PriorityLow]
	}
	return ix.prio[topology.PriorityHigh]
}

// The device kinds of preferCloseToDevices entries.
const (
	devNet   = "net"   // a network interface, by name
	devClass = "class" // another class device, by CLASS/NAME
	devPCI   = "pci"   // a PCI function, by address
	devNode  = "node"  // a NUMA node, by id
	devCPU   = "cpu"   // a CPU, by id
	devCache = "cache" // cache/index<index> of CPU id
)

// devicePaths are the preferCloseToDevices forms parseDevice accepts.
const devicePaths = "/sys/class/net/IFACE, /sys/class/CLASS/NAME, /sys/bus/pci/devices/ADDR, /sys/devices/pciDDDD:BB/.../ADDR[/...], " +
	"/sys/devices/system/node/nodeN, /sys/devices/system/cpu/cpuN or /sys/devices/system/cpu/cpuN/cache/indexM"

// device is a preferCloseToDevices entry.
type device struct {
	kind string
	name string // devNet, devClass, devPCI
	// id is the node (devNode) or CPU (devCPU, devCache); index is
	// devCache's indexM.
	id, index uint32
}

// parseDevice reads a preferCloseToDevices entry. The policy sees no sysfs,
// so it takes only the forms it resolves from the topology Init carries
// (devicePaths); pod-resources entries, relative paths and every other path
// are errors. A real PCI device path, /sys/devices/pciDDDD:BB/..., names
// the last component that is a PCI address (DDDD:BB:DD.F): the path may go
// through bridges and on below the device (…/0000:3b:00.0/net/eth0). A
// class device other than a network interface, /sys/class/drm/card0, is
// the PCI function whose class_devices list it (deviceCPUs).
func parseDevice(s string) (device, error) {
	switch {
	case strings.HasPrefix(s, "podresourceapi:"):
		return device{}, fmt.Errorf("%q: not supported: the ABI does not carry pod-resources assignments", s)
	case !strings.HasPrefix(s, "/"):
		return device{}, fmt.Errorf("%q is a relative path: want one of %s", s, devicePaths)
	}
	parts := strings.Split(strings.TrimSuffix(s[1:], "/"), "/")
	if slices.ContainsFunc(parts, func(p string) bool { return p == "" || p == "." || p == ".." }) {
		return device{}, fmt.Errorf("%q: want a clean path (no empty, \".\" or \"..\" component), one of %s", s, devicePaths)
	}
	if d, ok := matchDevice(parts); ok {
		return d, nil
	}
	return device{}, fmt.Errorf("%q: not a device path the policy can resolve from the node's topology: want one of %s", s, devicePaths)
}

// matchDevice recognizes a clean absolute path, split into components.
func matchDevice(p []string) (device, bool) {
	if r, ok := under(p, "sys", "class"); ok && len(r) == 2 {
		if r[0] == "net" {
			return device{kind: devNet, name: r[1]}, true
		}
		return device{kind: devClass, name: r[0] + "/" + r[1]}, true
	}
	if r, ok := under(p, "sys", "bus", "pci", "devices"); ok && len(r) == 1 && isPCIAddress(r[0]) {
		return device{kind: devPCI, name: r[0]}, true
	}
	if r, ok := under(p, "sys", "devices", "system", "node"); ok && len(r) == 1 {
		n, ok := numbered(r[0], "node")
		return device{kind: devNode, id: n}, ok
	}
	if r, ok := under(p, "sys", "devices", "system", "cpu"); ok && (len(r) == 1 || len(r) == 3 && r[1] == "cache") {
		n, ok := numbered(r[0], "cpu")
		if len(r) == 1 || !ok {
			return device{kind: devCPU, id: n}, ok
		}
		m, ok := numbered(r[2], "index")
		return device{kind: devCache, id: n, index: m}, ok
	}
	if r, ok := under(p, "sys", "devices"); ok && len(r) >= 2 && isHostBridge(r[0]) {
		for i := len(r) - 1; i > 0; i-- {
			if isPCIAddress(r[i]) {
				return device{kind: devPCI, name: r[i]}, true
			}
		}
	}
	return device{}, false
}

// under returns what follows prefix in path components p.
func under(p []string, prefix ...string) ([]string, bool) {
	if len(p) < len(prefix) || !slices.Equal(p[:len(prefix)], prefix) {
		return nil, false
	}
	return p[len(prefix):], true
}

// numbered reads "<prefix>N", N a decimal uint32.
func numbered(s, prefix string) (uint32, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(rest, 10, 32)
	return uint32(n), err == nil
}

// isPCIAddress tells whether s is a PCI function address as sysfs writes
// it: domain (4 or more hex digits: VMD domains have 5), bus, device (2 hex
// digits each) and function (0-7), in lower case: "0000:3b:00.0".
func isPCIAddress(s string) bool {
	i := strings.LastIndexByte(s, '.')
	if i < 0 || len(s)-i != 2 || s[i+1] < '0' || s[i+1] > '7' {
		return false
	}
	f := strings.Split(s[:i], ":")
	return len(f) == 3 && isHex(f[0], 4, 0) && isHex(f[1], 2, 2) && isHex(f[2], 2, 2)
}

// isHostBridge tells whether s is a PCI host bridge's sysfs directory name,
// "pci" domain ":" bus: "pci0000:00".
func isHostBridge(s string) bool {
	rest, ok := strings.CutPrefix(s, "pci")
	f := strings.Split(rest, ":")
	return ok && len(f) == 2 && isHex(f[0], 4, 0) && isHex(f[1], 2, 2)
}

// isHex tells whether s is lower-case hex digits, at least least and (if
// most > 0) at most most of them.
func isHex(s string, least, most int) bool {
	if len(s) < least || most > 0 && len(s) > most {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// unresolvable is why a preferCloseToDevices entry cannot be resolved on
// this host at all, nil when it can: only a host of ABI v1.5 or later
// (abi.MinorClassDevices) says which PCI function a class device belongs
// to, so for an older one a class path is refused, not taken for a device
// the node lacks.
func (ix *topoIndex) unresolvable(d device, path string) error {
	if d.kind != devClass || ix.hostMinor >= abi.MinorClassDevices {
		return nil
	}
	return fmt.Errorf("%q: the host (ABI v1.%d) does not say which PCI device a class device belongs to (since v1.%d): "+
		"update the agent, or name the device by its PCI path, /sys/bus/pci/devices/ADDR or /sys/devices/pciDDDD:BB/.../ADDR",
		path, ix.hostMinor, abi.MinorClassDevices)
}

// deviceCPUs are the CPUs close to a device; false when the node has no
// such device (an empty set and true: it has it, with no CPU affinity, or,
// for a CPU, none nri-plugins reads).
func (ix *topoIndex) deviceCPUs(d device) (cpuset.Set, bool) {
	switch d.kind {
	case devPCI:
		return ix.PCIDeviceCPUs(d.name)
	case devNet:
		return ix.NetworkInterfaceCPUs(d.name)
	case devClass:
		addr, ok := ix.classPCI[d.name]
		if !ok {
			return cpuset.Set{}, false
		}
		return ix.PCIDeviceCPUs(addr)
	case devNode:
		cpus := ix.NodeCPUs(d.id)
		return cpus, ix.Node(d.id) != nil || !cpus.IsEmpty()
	case devCPU:
		// nri-plugins reads no CPUs from a CPU's own directory: it holds
		// none of the files its topology hints read (cpulist,
		// local_cpulist, shared_cpu_list), nor do its parents.
		return cpuset.Set{}, ix.online.Contains(d.id)
	case devCache:
		c, ok := ix.CacheIndex(d.id, d.index)
		return c.CPUs, ok
	}
	return cpuset.Set{}, false
}

// memKind names a node's memory as memoryTypes does.
func (ix *topoIndex) memKind(n uint32) MemoryType {
	switch ix.MemoryKind(n) {
	case abi.MemoryKind_MEMORY_KIND_HBM:
		return "HBM"
	case abi.MemoryKind_MEMORY_KIND_PMEM, abi.MemoryKind_MEMORY_KIND_CXL:
		return "PMEM"
	}
	return "DRAM"
}

// memsKey names a memsList answer: the NUMA nodes (a mask up to 64 nodes,
// else their list) and the memory types.
type memsKey struct {
	mask         uint64
	nodes, types string
}

// memsList are the memory nodes for cpus, in list form ("0,2"): for each
// allowed memory type, the nodes of that type closest to each of cpus'
// nodes. A type the node lacks is skipped; if none of the allowed types
// exists, every memory type is. Answers are memoized, under a key built
// without allocating in the common case (up to 64 nodes, at most one memory
// type): the policy asks for every balloon whose CPUs change.
func (ix *topoIndex) memsList(cpus cpuset.Set, types []MemoryType) string {
	var k memsKey
	if ix.dims.node <= 64 {
		for id := range cpus.All() {
			k.mask |= 1 << uint(ix.cpus[id].node)
		}
	} else {
		k.nodes = ix.nodesOf(cpus).String()
	}
	for i, t := range types {
		if i > 0 {
			k.types += ","
		}
		k.types += string(t)
	}
	if list, ok := ix.mems[k]; ok {
		return list
	}
	if ix.mems == nil {
		ix.mems = map[memsKey]string{}
	}
	list := ix.nodeMems(ix.nodesOf(cpus), types).String()
	ix.mems[k] = list
	return list
}

// nodeMems computes memsList for a set of NUMA nodes.
func (ix *topoIndex) nodeMems(nodes cpuset.Set, types []MemoryType) cpuset.Set {
	allowed := func(m uint32) bool {
		if len(types) == 0 {
			return true
		}
		for _, t := range types {
			if ix.memKind(m) == t {
				return true
			}
		}
		return false
	}
	var mems []uint32
	for _, n := range nodes.Sorted() {
		best := map[MemoryType]uint32{}
		var picks []uint32
		for _, m := range ix.NodeIDs() {
			if !ix.HasMemory(m) || !allowed(m) {
				continue
			}
			k, d := ix.memKind(m), ix.Distance(n, m)
			if b, ok := best[k]; !ok || d < b {
				best[k] = d
			}
		}
		for _, m := range ix.NodeIDs() {
			if b, ok := best[ix.memKind(m)]; ok && ix.HasMemory(m) && allowed(m) && ix.Distance(n, m) == b {
				picks = append(picks, m)
			}
		}
		mems = append(mems, picks...)
	}
	if len(mems) == 0 && len(types) > 0 {
		return ix.nodeMems(nodes, nil)
	}
	return cpuset.New(mems...)
}
