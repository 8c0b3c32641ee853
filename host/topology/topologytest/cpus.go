package topologytest

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// lcpu is one generated logical CPU.
type lcpu struct {
	id                 int
	socket, die, node  int // node is the global NUMA node id
	core               int // global core index
	coreID             int // core_id, unique within the package
	l2, l3             int // global L2 (cluster) and L3 instance ids
	pcore, ecore       bool
	offline            bool
	l1dSize, l1iSize   int // KiB
	l2Size, l3SizeKiB  int
	siblings, l2Shares []int
}

// layout enumerates m's CPUs, sorted by id.
func (m Machine) layout() []*lcpu {
	var cpus []*lcpu
	if h := m.Hybrid; h != nil {
		per := h.ECoresPerCluster
		if per <= 0 {
			per = 4
		}
		for k := 0; k < h.PCores; k++ {
			for t := 0; t < 2; t++ {
				cpus = append(cpus, &lcpu{id: 2*k + t, core: k, coreID: k, l2: k, pcore: true,
					l1dSize: 48, l1iSize: 32, l2Size: 1280, l3SizeKiB: 24576})
			}
		}
		for j := 0; j < h.ECores; j++ {
			cpus = append(cpus, &lcpu{id: 2*h.PCores + j, core: h.PCores + j, coreID: h.PCores + j,
				l2: h.PCores + j/per, ecore: true, l1dSize: 32, l1iSize: 64, l2Size: 2048, l3SizeKiB: 24576})
		}
	} else {
		S, D, N := or1(m.Sockets), or1(m.DiesPerSocket), or1(m.NodesPerDie)
		C, T := or1(m.CoresPerNode), or1(m.ThreadsPerCore)
		groups := or1(m.L3PerNode)
		perGroup := (C + groups - 1) / groups
		perSocket := D * N * C
		numCores := S * perSocket
		for s := 0; s < S; s++ {
			for d := 0; d < D; d++ {
				for n := 0; n < N; n++ {
					node := (s*D+d)*N + n
					for c := 0; c < C; c++ {
						inSocket := (d*N+n)*C + c
						k := s*perSocket + inSocket
						order := k
						if m.Interleaved {
							order = inSocket*S + s
						}
						for t := 0; t < T; t++ {
							id := t*numCores + order
							if m.ThreadsAdjacent {
								id = order*T + t
							}
							if m.Sparse != nil {
								id += m.Sparse.Gap * (id / perSocket)
							}
							cpus = append(cpus, &lcpu{id: id, socket: s, die: d, node: node,
								core: k, coreID: inSocket, l2: k, l3: node*groups + c/perGroup,
								l1dSize: 48, l1iSize: 32, l2Size: 2048, l3SizeKiB: 32768})
						}
					}
				}
			}
		}
	}
	sort.Slice(cpus, func(i, j int) bool { return cpus[i].id < cpus[j].id })
	if m.Sparse != nil {
		for i := len(cpus) - m.Sparse.OfflineLast; i < len(cpus); i++ {
			if i >= 0 {
				cpus[i].offline = true
			}
		}
		if m.Sparse.Online != nil {
			for _, c := range cpus {
				c.offline = !slices.Contains(m.Sparse.Online, c.id)
			}
		}
	}
	// Sharing lists hold online CPUs only, as the kernel's do.
	byCore, byL2 := map[int][]int{}, map[int][]int{}
	for _, c := range cpus {
		if !c.offline {
			byCore[c.core] = append(byCore[c.core], c.id)
			byL2[c.l2] = append(byL2[c.l2], c.id)
		}
	}
	for _, c := range cpus {
		c.siblings, c.l2Shares = byCore[c.core], byL2[c.l2]
	}
	return cpus
}

func (m Machine) writeCPUs(w *writer, cpus []*lcpu) {
	const dir = "devices/system/cpu"
	var online, offline, all, pcores, ecores []int
	byL3 := map[int][]int{}
	for _, c := range cpus {
		all = append(all, c.id)
		if c.offline {
			offline = append(offline, c.id)
			continue
		}
		online = append(online, c.id)
		byL3[c.l3] = append(byL3[c.l3], c.id)
		if c.pcore {
			pcores = append(pcores, c.id)
		}
		if c.ecore {
			ecores = append(ecores, c.id)
		}
	}
	w.file(dir+"/online", list(online))
	w.file(dir+"/offline", list(offline))
	w.file(dir+"/possible", list(all))
	w.file(dir+"/present", list(all))
	w.file(dir+"/isolated", m.Isolated)
	if m.Hybrid != nil {
		w.file("devices/cpu_core/cpus", list(pcores))
		w.file("devices/cpu_atom/cpus", list(ecores))
	}
	if k := m.CoreKinds; k != nil {
		w.file("devices/cpu_core/cpus", k.PCores)
		w.file("devices/cpu_atom/cpus", k.ECores)
	}
	for _, c := range cpus {
		cd := fmt.Sprintf("%s/cpu%d/", dir, c.id)
		if c.offline {
			w.file(cd+"online", "0")
			continue
		}
		if c.id != 0 {
			w.file(cd+"online", "1")
		}
		w.filef(cd+"topology/physical_package_id", "%d", c.socket)
		w.filef(cd+"topology/die_id", "%d", c.die)
		w.filef(cd+"topology/cluster_id", "%d", c.l2)
		w.filef(cd+"topology/core_id", "%d", c.coreID)
		w.file(cd+"topology/thread_siblings_list", list(c.siblings))
		w.link(cd+fmt.Sprintf("node%d", c.node), fmt.Sprintf("devices/system/node/node%d", c.node))
		caches := []struct {
			level   int
			typ     string
			kib, id int
			shared  []int
		}{
			{1, "Data", c.l1dSize, c.core, c.siblings},
			{1, "Instruction", c.l1iSize, c.core, c.siblings},
			{2, "Unified", c.l2Size, c.l2, c.l2Shares},
			{3, "Unified", c.l3SizeKiB, c.l3, byL3[c.l3]},
		}
		for i, k := range caches {
			id := fmt.Sprintf("%scache/index%d/", cd, i)
			w.filef(id+"level", "%d", k.level)
			w.file(id+"type", k.typ)
			w.filef(id+"size", "%dK", k.kib)
			w.file(id+"shared_cpu_list", list(k.shared))
			w.filef(id+"id", "%d", k.id)
		}
		if f := m.Freq; f != nil {
			w.filef(cd+"cpufreq/cpuinfo_min_freq", "%d", f.MinKHz)
			w.filef(cd+"cpufreq/cpuinfo_max_freq", "%d", f.MaxKHz)
			w.filef(cd+"cpufreq/base_frequency", "%d", f.BaseKHz)
		}
		if epp, ok := m.eppOf(c.id); ok {
			w.file(cd+"cpufreq/energy_performance_preference", epp)
		}
	}
}

// eppOf is CPU id's energy-performance preference and whether m gives it
// one.
func (m Machine) eppOf(id int) (string, bool) {
	for _, e := range m.EPP {
		if slices.Contains(e.CPUs, id) {
			return e.Value, true
		}
	}
	return "", false
}

// list formats ids (sorted) in the kernel's list format. It is written
// independently of topology.FormatList so that tests cross-check the two.
func list(ids []int) string {
	ids = append([]int(nil), ids...)
	sort.Ints(ids)
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ids[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
