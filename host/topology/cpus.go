package topology

import (
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const cpuDir = "devices/system/cpu"

// noCluster is the cluster_id x86 kernels print when firmware describes no
// L2 clusters (BAD_APICID); it means the same as a missing file.
const noCluster = 0xffff

// cpuSet is what CPU discovery hands to the cache and NUMA steps.
type cpuSet struct {
	list    []*abi.CPU // online CPUs, sorted by id
	online  idSet
	offline []uint32
	// nodeDir tells whether sysfs has a NUMA node directory at all.
	nodeDir bool
	// cacheRefs[i] lists the caches list[i] reports, innermost first.
	cacheRefs [][]cacheRef
}

func (s *sysfs) discoverCPUs() (*cpuSet, error) {
	online, offline, err := s.onlineCPUs()
	if err != nil {
		return nil, err
	}
	set := &cpuSet{online: newIDSet(online), offline: offline}

	isolated, _, err := s.readList(cpuDir + "/isolated")
	if err != nil {
		return nil, err
	}
	isolatedSet := newIDSet(isolated)
	pCores, _, err := s.readList("devices/cpu_core/cpus")
	if err != nil {
		return nil, err
	}
	eCores, _, err := s.readList("devices/cpu_atom/cpus")
	if err != nil {
		return nil, err
	}
	pSet, eSet := newIDSet(pCores), newIDSet(eCores)
	nodeOf, nodeDir, err := s.cpuNodes(online)
	if err != nil {
		return nil, err
	}
	set.nodeDir = nodeDir

	// The per-CPU files are most of what Discover reads; read them in
	// parallel. cache refs are merged into instances afterwards.
	set.list = make([]*abi.CPU, len(online))
	set.cacheRefs = make([][]cacheRef, len(online))
	err = parallel(len(online), func(i int) error {
		id := online[i]
		c, err := s.readCPU(id, set.online)
		if err != nil {
			return err
		}
		c.NumaNode = nodeOf[id]
		c.Isolated = isolatedSet.has(id)
		switch {
		case pSet.has(id):
			c.CoreType = abi.CoreType_CORE_TYPE_PERFORMANCE
		case eSet.has(id):
			c.CoreType = abi.CoreType_CORE_TYPE_EFFICIENT
		}
		set.list[i] = c
		set.cacheRefs[i], err = s.readCacheRefs(id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return set, nil
}

// onlineCPUs reads the online and offline lists. Without an online list it
// falls back to the cpuN directories and their per-CPU online files.
func (s *sysfs) onlineCPUs() (online, offline []uint32, err error) {
	online, haveOnline, err := s.readList(cpuDir + "/online")
	if err != nil {
		return nil, nil, err
	}
	offline, haveOffline, err := s.readList(cpuDir + "/offline")
	if err != nil {
		return nil, nil, err
	}
	if haveOnline {
		return online, offline, nil
	}
	ids, err := s.numberedNames(cpuDir, "cpu")
	if err != nil {
		return nil, nil, err
	}
	online = online[:0]
	var down []uint32
	for _, id := range ids {
		state, ok, err := s.readUint(fmt.Sprintf("%s/cpu%d/online", cpuDir, id), 1)
		if err != nil {
			return nil, nil, err
		}
		if ok && state == 0 {
			down = append(down, id)
		} else {
			online = append(online, id)
		}
	}
	if !haveOffline {
		offline = down
	}
	return online, offline, nil
}

// readCPU reads one online CPU's topology and cpufreq files.
func (s *sysfs) readCPU(id uint32, online idSet) (*abi.CPU, error) {
	dir := fmt.Sprintf("%s/cpu%d/", cpuDir, id)
	c := &abi.CPU{Id: id}
	var err error
	if c.PackageId, _, err = s.readID(dir + "topology/physical_package_id"); err != nil {
		return nil, err
	}
	if c.DieId, _, err = s.readID(dir + "topology/die_id"); err != nil {
		return nil, err
	}
	if c.ClusterId, _, err = s.readID(dir + "topology/cluster_id"); err != nil {
		return nil, err
	}
	if c.ClusterId == noCluster {
		c.ClusterId = 0
	}
	if c.CoreId, _, err = s.readID(dir + "topology/core_id"); err != nil {
		return nil, err
	}
	siblings, ok, err := s.readList(dir + "topology/thread_siblings_list")
	if err != nil {
		return nil, err
	}
	if ok {
		// Keep online siblings only, and never lose the CPU itself.
		siblings = online.filter(siblings)
	}
	if !containsID(siblings, id) {
		siblings = sortedUnique(append(siblings, id))
	}
	c.ThreadSiblings = siblings
	freqs := []struct {
		file string
		dst  *uint64
	}{
		{"cpufreq/cpuinfo_min_freq", &c.MinFreqKhz},
		{"cpufreq/cpuinfo_max_freq", &c.MaxFreqKhz},
		{"cpufreq/base_frequency", &c.BaseFreqKhz},
	}
	if !s.exists(dir + "cpufreq") {
		return c, nil
	}
	for _, f := range freqs {
		if *f.dst, _, err = s.readUint(dir+f.file, 64); err != nil {
			return nil, err
		}
	}
	if c.EnergyPerformancePreference, err = s.readEPP(dir + "cpufreq/energy_performance_preference"); err != nil {
		return nil, err
	}
	return c, nil
}

// maxEPPBytes bounds an energy_performance_preference file: the kernel's
// longest value, "balance_performance", has 19 bytes and a raw one at most
// 3 digits, so anything longer is not the kernel's.
const maxEPPBytes = 32

// readEPP reads a CPU's energy-performance preference as the kernel prints
// it (ABI v1.4 CPU.energy_performance_preference); a missing file is "",
// unknown. It does not interpret the value: a policy does.
func (s *sysfs) readEPP(rel string) (string, error) {
	c, ok, err := s.read(rel)
	if !ok || err != nil {
		return "", err
	}
	if len(c) > maxEPPBytes {
		return "", s.badContent(rel, c, fmt.Errorf("energy_performance_preference: %d bytes, over the limit of %d", len(c), maxEPPBytes))
	}
	return c, nil
}

// cpuNodes maps each online CPU to its NUMA node: from the nodes' cpulist
// files, else from the cpuN/nodeM link, else node 0. nodeDir reports whether
// devices/system/node exists.
func (s *sysfs) cpuNodes(online []uint32) (nodeOf map[uint32]uint32, nodeDir bool, err error) {
	nodeOf = make(map[uint32]uint32, len(online))
	if !s.exists(nodeRoot) {
		return nodeOf, false, nil
	}
	nodes, err := s.numberedNames(nodeRoot, "node")
	if err != nil {
		return nil, true, err
	}
	for _, n := range nodes {
		cpus, _, err := s.readList(fmt.Sprintf("%s/node%d/cpulist", nodeRoot, n))
		if err != nil {
			return nil, true, err
		}
		for _, c := range cpus {
			if _, dup := nodeOf[c]; !dup {
				nodeOf[c] = n
			}
		}
	}
	for _, c := range online {
		if _, ok := nodeOf[c]; ok {
			continue
		}
		links, err := s.numberedNames(fmt.Sprintf("%s/cpu%d", cpuDir, c), "node")
		if err != nil {
			return nil, true, err
		}
		if len(links) > 0 {
			nodeOf[c] = links[0]
		}
	}
	return nodeOf, true, nil
}

func containsID(sorted []uint32, id uint32) bool {
	for _, v := range sorted {
		if v == id {
			return true
		}
		if v > id {
			break
		}
	}
	return false
}
