package topology

import (
	"fmt"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const tierRoot = "devices/virtual/memory_tiering"

// memEvidence is what sysfs reveals about CPU-less nodes' memory besides
// distances (RATIONALE.md, "Why classify memory this way?").
type memEvidence struct {
	// tier maps a node to its memory tier id; a higher id is slower.
	tier map[uint32]uint32
	// device maps a node to the kind its backing device shows: CXL for a
	// dax or nd region under a CXL device, PMEM for one under a libnvdimm
	// bus.
	device map[uint32]abi.MemoryKind
}

func (s *sysfs) memoryEvidence() (*memEvidence, error) {
	ev := &memEvidence{tier: map[uint32]uint32{}, device: map[uint32]abi.MemoryKind{}}
	tiers, err := s.numberedNames(tierRoot, "memory_tier")
	if err != nil {
		return nil, err
	}
	for _, t := range tiers {
		nodes, _, err := s.readList(fmt.Sprintf("%s/memory_tier%d/nodelist", tierRoot, t))
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			ev.tier[n] = t
		}
	}

	// Where the CXL bus's devices live: memory under one of them is CXL.
	var cxlPaths []string
	cxlDevs, err := s.subdirs("bus/cxl/devices")
	if err != nil {
		return nil, err
	}
	for _, d := range cxlDevs {
		if p, ok, err := s.resolve("bus/cxl/devices/" + d); err != nil {
			return nil, err
		} else if ok {
			cxlPaths = append(cxlPaths, p+"/")
		}
		if n, ok, err := s.readID("bus/cxl/devices/" + d + "/target_node"); err != nil {
			return nil, err
		} else if ok {
			ev.device[n] = abi.MemoryKind_MEMORY_KIND_CXL
		}
	}
	underCXL := func(p string) bool {
		if strings.Contains(p, "/ACPI0017:") { // the CXL root device
			return true
		}
		return slices.ContainsFunc(cxlPaths, func(c string) bool { return strings.HasPrefix(p, c) })
	}

	// dax devices (kmem-onlined memory) and libnvdimm regions name the node
	// their memory becomes in target_node.
	for _, bus := range []string{"bus/dax/devices", "bus/nd/devices"} {
		devs, err := s.subdirs(bus)
		if err != nil {
			return nil, err
		}
		for _, d := range devs {
			n, ok, err := s.readID(bus + "/" + d + "/target_node")
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			p, _, err := s.resolve(bus + "/" + d)
			if err != nil {
				return nil, err
			}
			switch {
			case underCXL(p):
				ev.device[n] = abi.MemoryKind_MEMORY_KIND_CXL
			case strings.Contains(p, "/ndbus") && ev.device[n] != abi.MemoryKind_MEMORY_KIND_CXL:
				ev.device[n] = abi.MemoryKind_MEMORY_KIND_PMEM
			}
			// Other dax devices (hmem: soft-reserved "specific purpose"
			// memory) say nothing about the kind.
		}
	}
	return ev, nil
}

// classifyMemory sets every node's memory kind: DRAM for nodes with CPUs;
// for CPU-less nodes with memory, in order, the backing device's kind, the
// memory tier relative to the DRAM nodes' tiers, then the distance to the
// nearest CPU node relative to the local distance. A node the evidence does
// not settle stays unspecified.
func classifyMemory(nodes []*abi.NUMANode, noMemory map[uint32]bool, ev *memEvidence) {
	var dramTiers []uint32
	local := uint32(0)
	cpuNodes := newIDSet(nil)
	for _, n := range nodes {
		if len(n.Cpus) == 0 {
			continue
		}
		n.MemoryKind = abi.MemoryKind_MEMORY_KIND_DRAM
		cpuNodes.add(n.Id)
		if t, ok := ev.tier[n.Id]; ok && !noMemory[n.Id] {
			dramTiers = append(dramTiers, t)
		}
		for _, d := range n.Distances {
			if d.Node == n.Id && d.Distance > 0 && (local == 0 || d.Distance < local) {
				local = d.Distance
			}
		}
	}
	for _, n := range nodes {
		if len(n.Cpus) > 0 || noMemory[n.Id] {
			continue
		}
		n.MemoryKind = classifyCPULess(n, cpuNodes, dramTiers, local, ev)
	}
}

func classifyCPULess(n *abi.NUMANode, cpuNodes idSet, dramTiers []uint32, local uint32, ev *memEvidence) abi.MemoryKind {
	if k, ok := ev.device[n.Id]; ok {
		return k
	}
	if t, ok := ev.tier[n.Id]; ok && len(dramTiers) > 0 {
		switch {
		case t > slices.Max(dramTiers):
			return abi.MemoryKind_MEMORY_KIND_PMEM
		case t < slices.Min(dramTiers):
			return abi.MemoryKind_MEMORY_KIND_HBM
		}
	}
	nearest := uint32(0)
	for _, d := range n.Distances {
		if cpuNodes.has(d.Node) && d.Distance > 0 && (nearest == 0 || d.Distance < nearest) {
			nearest = d.Distance
		}
	}
	switch {
	case local == 0 || nearest == 0:
		return abi.MemoryKind_MEMORY_KIND_UNSPECIFIED
	case nearest >= 2*local:
		return abi.MemoryKind_MEMORY_KIND_PMEM
	case 2*nearest < 3*local:
		return abi.MemoryKind_MEMORY_KIND_HBM
	}
	return abi.MemoryKind_MEMORY_KIND_UNSPECIFIED
}
