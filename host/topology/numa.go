package topology

import (
	"fmt"
	"strconv"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const nodeRoot = "devices/system/node"

// localDistance is the SLIT distance of a node to itself (the kernel's
// LOCAL_DISTANCE), used for the single node of a kernel without NUMA.
const localDistance = 10

// discoverNodes reads the NUMA nodes. Without devices/system/node (a kernel
// built without NUMA) it returns one node 0 with every CPU and unknown (0)
// memory. Every node a CPU names is present even if the node lists omit it.
func (s *sysfs) discoverNodes(cpus *cpuSet) ([]*abi.NUMANode, error) {
	if !cpus.nodeDir {
		n := &abi.NUMANode{
			Distances:  []*abi.NodeDistance{{Node: 0, Distance: localDistance}},
			MemoryKind: abi.MemoryKind_MEMORY_KIND_DRAM,
		}
		for _, c := range cpus.list {
			n.Cpus = append(n.Cpus, c.Id)
		}
		return []*abi.NUMANode{n}, nil
	}
	online, err := s.nodeIDs()
	if err != nil {
		return nil, err
	}
	all := newIDSet(online)
	for _, c := range cpus.list {
		all.add(c.NumaNode)
	}
	byID := make(map[uint32]*abi.NUMANode)
	var nodes []*abi.NUMANode
	noMemory := make(map[uint32]bool)
	for id, present := range all {
		if !present {
			continue
		}
		n, memKnown, err := s.readNode(uint32(id), online)
		if err != nil {
			return nil, err
		}
		if memKnown && n.MemoryBytes == 0 {
			noMemory[n.Id] = true
		}
		nodes = append(nodes, n)
		byID[n.Id] = n
	}
	for _, c := range cpus.list {
		n := byID[c.NumaNode]
		n.Cpus = append(n.Cpus, c.Id) // cpus.list is sorted, so is n.Cpus
	}
	ev, err := s.memoryEvidence()
	if err != nil {
		return nil, err
	}
	classifyMemory(nodes, noMemory, ev)
	return nodes, nil
}

// nodeIDs lists the online nodes: the online file, else has_memory ∪
// has_cpu, else the nodeN directories.
func (s *sysfs) nodeIDs() ([]uint32, error) {
	ids, ok, err := s.readList(nodeRoot + "/online")
	if ok || err != nil {
		return ids, err
	}
	mem, okMem, err := s.readList(nodeRoot + "/has_memory")
	if err != nil {
		return nil, err
	}
	cpu, okCPU, err := s.readList(nodeRoot + "/has_cpu")
	if err != nil {
		return nil, err
	}
	if okMem || okCPU {
		return sortedUnique(append(mem, cpu...)), nil
	}
	return s.numberedNames(nodeRoot, "node")
}

// readNode reads nodeN's meminfo, distance and hugepages. distance lists
// one entry per online node, in the order of online.
func (s *sysfs) readNode(id uint32, online []uint32) (n *abi.NUMANode, memKnown bool, err error) {
	dir := fmt.Sprintf("%s/node%d/", nodeRoot, id)
	n = &abi.NUMANode{Id: id}
	if n.MemoryBytes, memKnown, err = s.readMemTotal(dir + "meminfo"); err != nil {
		return nil, false, err
	}
	dist, ok, err := s.read(dir + "distance")
	if err != nil {
		return nil, false, err
	}
	if ok {
		fields := strings.Fields(dist)
		if len(fields) != len(online) {
			return nil, false, s.badContent(dir+"distance", dist,
				fmt.Errorf("%d distances for %d online nodes (%s)", len(fields), len(online), FormatList(online)))
		}
		for i, f := range fields {
			d, err := strconv.ParseUint(f, 10, 32)
			if err != nil {
				return nil, false, s.badContent(dir+"distance", dist, err)
			}
			n.Distances = append(n.Distances, &abi.NodeDistance{Node: online[i], Distance: uint32(d)})
		}
	}
	if n.HugepagesTotal, err = s.readHugepages(dir + "hugepages"); err != nil {
		return nil, false, err
	}
	return n, memKnown, nil
}

// readMemTotal returns the MemTotal line of a node's meminfo in bytes
// ("Node 0 MemTotal:       32768 kB").
func (s *sysfs) readMemTotal(rel string) (bytes uint64, ok bool, err error) {
	c, ok, err := s.read(rel)
	if !ok || err != nil {
		return 0, false, err
	}
	for line := range strings.SplitSeq(c, "\n") {
		_, rest, found := strings.Cut(line, "MemTotal:")
		if !found {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false, s.badContent(rel, line, fmt.Errorf("want \"<n> kB\""))
		}
		kb, err := strconv.ParseUint(f[0], 10, 54)
		if err != nil {
			return 0, false, s.badContent(rel, line, err)
		}
		return kb << 10, true, nil
	}
	return 0, false, s.badContent(rel, c, fmt.Errorf("no MemTotal line"))
}

// readHugepages maps page size in bytes to nr_hugepages for each
// hugepages-<size>kB directory, zero counts included (they show which
// sizes the node supports). No directory gives nil.
func (s *sysfs) readHugepages(dir string) (map[uint64]uint64, error) {
	names, err := s.dirNames(dir, "hugepages-")
	if err != nil || len(names) == 0 {
		return nil, err
	}
	pages := make(map[uint64]uint64, len(names))
	for _, name := range names {
		size, ok := strings.CutSuffix(strings.TrimPrefix(name, "hugepages-"), "kB")
		kb, err := strconv.ParseUint(size, 10, 54)
		if !ok || err != nil {
			return nil, fmt.Errorf("topology: %s: bad hugepage directory name %q", s.path(dir), name)
		}
		nr, _, err := s.readUint(dir+"/"+name+"/nr_hugepages", 64)
		if err != nil {
			return nil, err
		}
		pages[kb<<10] = nr
	}
	return pages, nil
}
