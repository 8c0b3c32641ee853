package topologytest

import (
	"fmt"
	"strconv"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// memory tier ids the kernel gives DRAM and default dax (kmem) memory; HBM
// gets a faster one in these fixtures.
const (
	tierHBM  = 3
	tierDRAM = 4
	tierSlow = 5
)

// cpuNodes is the number of NUMA nodes with CPUs.
func (m Machine) cpuNodes() int {
	if m.Hybrid != nil {
		return 1
	}
	return or1(m.Sockets) * or1(m.DiesPerSocket) * or1(m.NodesPerDie)
}

// nodeSocket returns the socket of a node (CPU nodes first, then CPU-less).
func (m Machine) nodeSocket(n int) int {
	if k := m.cpuNodes(); n >= k {
		return m.CPULessNodes[n-k].Socket
	}
	if m.Hybrid != nil {
		return 0
	}
	return n / (or1(m.DiesPerSocket) * or1(m.NodesPerDie))
}

func (c CPULessNode) distance() int {
	if c.Distance > 0 {
		return c.Distance
	}
	switch c.Kind {
	case abi.MemoryKind_MEMORY_KIND_HBM:
		return 13
	case abi.MemoryKind_MEMORY_KIND_CXL:
		return 24
	}
	return 17
}

// distance returns the SLIT distance between nodes a and b.
func (m Machine) distance(a, b int) int {
	if a == b {
		return 10
	}
	k := m.cpuNodes()
	remote := 0
	if m.nodeSocket(a) != m.nodeSocket(b) {
		remote = 11
		if or1(m.Sockets) > 2 {
			remote = 22
		}
	}
	switch {
	case a >= k && b >= k:
		return max(m.CPULessNodes[a-k].distance(), m.CPULessNodes[b-k].distance()) + remote
	case a >= k:
		return m.CPULessNodes[a-k].distance() + remote
	case b >= k:
		return m.CPULessNodes[b-k].distance() + remote
	case remote > 0:
		return 10 + remote
	}
	return 12 // another node of the same socket
}

func (m Machine) writeNodes(w *writer, cpus []*lcpu) {
	const dir = "devices/system/node"
	k := m.cpuNodes()
	total := k + len(m.CPULessNodes)
	nodeCPUs := make([][]int, total)
	for _, c := range cpus {
		if !c.offline {
			nodeCPUs[c.node] = append(nodeCPUs[c.node], c.id)
		}
	}
	var all, withCPU []int
	for n := 0; n < total; n++ {
		all = append(all, n)
		if n < k {
			withCPU = append(withCPU, n)
		}
	}
	w.file(dir+"/online", list(all))
	w.file(dir+"/possible", list(all))
	w.file(dir+"/has_memory", list(all))
	w.file(dir+"/has_normal_memory", list(all))
	w.file(dir+"/has_cpu", list(withCPU))
	tiers := map[int][]int{}
	for n := 0; n < total; n++ {
		nd := fmt.Sprintf("%s/node%d/", dir, n)
		gib, tier := m.MemPerNodeGiB, tierDRAM
		if n >= k {
			c := m.CPULessNodes[n-k]
			gib = c.SizeGiB
			switch {
			case c.NoEvidence:
			case c.Kind == abi.MemoryKind_MEMORY_KIND_HBM:
				tier = tierHBM
			default:
				tier = tierSlow
			}
		}
		tiers[tier] = append(tiers[tier], n)
		w.file(nd+"cpulist", list(nodeCPUs[n]))
		kb := gib << 20
		w.file(nd+"meminfo", fmt.Sprintf("Node %d MemTotal:       %8d kB\nNode %d MemFree:        %8d kB\nNode %d MemUsed:        %8d kB",
			n, kb, n, kb/2, n, kb-kb/2))
		var d []string
		for o := 0; o < total; o++ {
			d = append(d, strconv.Itoa(m.distance(n, o)))
		}
		w.file(nd+"distance", strings.Join(d, " "))
		huge := 0
		if n < k {
			huge = m.HugePages2M
		}
		w.filef(nd+"hugepages/hugepages-2048kB/nr_hugepages", "%d", huge)
		w.file(nd+"hugepages/hugepages-1048576kB/nr_hugepages", "0")
	}
	for t, nodes := range tiers {
		w.file(fmt.Sprintf("devices/virtual/memory_tiering/memory_tier%d/nodelist", t), list(nodes))
	}
}

// writeMemoryEvidence adds the devices behind CPU-less nodes: a dax device
// under a libnvdimm bus for PMEM, under a CXL region for CXL, under an hmem
// platform device (no evidence of kind) for HBM.
func (m Machine) writeMemoryEvidence(w *writer) {
	k := m.cpuNodes()
	for i, c := range m.CPULessNodes {
		if c.NoEvidence {
			continue
		}
		node := k + i
		var region, dax string
		switch c.Kind {
		case abi.MemoryKind_MEMORY_KIND_CXL:
			region = fmt.Sprintf("devices/platform/ACPI0017:00/root0/decoder0.%d/region%d", i, i)
			dax = fmt.Sprintf("%s/dax_region%d/dax%d.0", region, i, i)
			w.link(fmt.Sprintf("bus/cxl/devices/region%d", i), region)
			w.link(fmt.Sprintf("bus/cxl/devices/decoder0.%d", i), "devices/platform/ACPI0017:00/root0/decoder0."+strconv.Itoa(i))
			w.link("bus/cxl/devices/root0", "devices/platform/ACPI0017:00/root0")
		case abi.MemoryKind_MEMORY_KIND_HBM:
			dax = fmt.Sprintf("devices/platform/hmem.%d/dax%d.0", i, i)
		default:
			region = fmt.Sprintf("devices/platform/e820_pmem/ndbus0/region%d", i)
			dax = fmt.Sprintf("%s/dax%d.0", region, i)
			w.filef(region+"/target_node", "%d", node)
			w.link(fmt.Sprintf("bus/nd/devices/region%d", i), region)
		}
		w.filef(dax+"/target_node", "%d", node)
		w.link(fmt.Sprintf("bus/dax/devices/dax%d.0", i), dax)
	}
}
