package topology_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"google.golang.org/protobuf/proto"
)

const (
	gib = uint64(1) << 30
	l1d = abi.CacheType_CACHE_TYPE_DATA
	l1i = abi.CacheType_CACHE_TYPE_INSTRUCTION
	uni = abi.CacheType_CACHE_TYPE_UNIFIED
)

func TestFixtures(t *testing.T) {
	tests := []struct {
		name     string
		machine  topologytest.Machine
		cpus     int
		offline  string
		sockets  int
		dies     int // distinct (package, die) pairs
		nodes    int
		caches   map[uint32]int // instances per level
		isolated string
		check    func(t *testing.T, topo *abi.Topology)
	}{{
		name: "Desktop1Socket", machine: topologytest.Desktop1Socket(),
		cpus: 16, sockets: 1, dies: 1, nodes: 1,
		caches: map[uint32]int{1: 16, 2: 8, 3: 1},
		check: func(t *testing.T, topo *abi.Topology) {
			c := cpuByID(t, topo, 3)
			wantSlice(t, "cpu3 siblings", c.ThreadSiblings, 3, 11)
			if c.MinFreqKhz != 800000 || c.MaxFreqKhz != 4700000 || c.BaseFreqKhz != 3600000 {
				t.Errorf("cpu3 freq %d/%d/%d", c.MinFreqKhz, c.MaxFreqKhz, c.BaseFreqKhz)
			}
			if got := cacheOf(t, topo, 3, 1, l1d); got.SizeBytes != 48<<10 || topology.FormatList(got.Cpus) != "3,11" {
				t.Errorf("cpu3 L1d %v", got)
			}
			if got := cacheOf(t, topo, 3, 3, uni); got.SizeBytes != 32<<20 || len(got.Cpus) != 16 {
				t.Errorf("L3 %v", got)
			}
			n := topo.NumaNodes[0]
			if n.MemoryBytes != 32*gib || n.MemoryKind != abi.MemoryKind_MEMORY_KIND_DRAM {
				t.Errorf("node 0: %v", n)
			}
			wantPCI(t, topo, "0000:00:1f.6", nil, "0000:00:1f.6", "e1000e")
			wantPCI(t, topo, "0000:01:00.0", nil, "0000:00:1d.0", "nvme")
			wantPCI(t, topo, "0000:00:1d.0", nil, "0000:00:1d.0", "pcieport")
			wantNIC(t, topo, "eno1", "0000:00:1f.6", nil, "0000:00:1f.6", false, true)
			wantNIC(t, topo, "docker0", "", nil, "", true, false)
			wantNIC(t, topo, "lo", "", nil, "", true, true)
		},
	}, {
		// Every CPU's energy_performance_preference as the file holds it,
		// "" where there is none (cpu12-15).
		name: "N4C16EPP", machine: topologytest.N4C16EPP(),
		cpus: 16, sockets: 2, dies: 2, nodes: 4,
		caches: map[uint32]int{1: 16, 2: 8, 3: 4},
		check: func(t *testing.T, topo *abi.Topology) {
			var got []string
			for _, c := range topo.Cpus {
				got = append(got, c.EnergyPerformancePreference)
			}
			bp, bperf := "balance_power", "balance_performance"
			want := []string{bp, bp, bp, bp, "performance", "performance", bp, "default", bperf, bperf, bperf, bperf, "", "", "", ""}
			if !slices.Equal(got, want) {
				t.Errorf("energy-performance preferences by CPU %q, want %q", got, want)
			}
		},
	}, {
		name: "N4C16", machine: topologytest.N4C16(),
		cpus: 16, sockets: 2, dies: 2, nodes: 4,
		caches: map[uint32]int{1: 16, 2: 8, 3: 4},
		check: func(t *testing.T, topo *abi.Topology) {
			wantSlice(t, "cpu6 siblings", cpuByID(t, topo, 6).ThreadSiblings, 6, 7)
			if got := cacheOf(t, topo, 6, 1, l1d); topology.FormatList(got.Cpus) != "6-7" {
				t.Errorf("cpu6 L1d %s, want 6-7", topology.FormatList(got.Cpus))
			}
			for n, want := range []string{"0-3", "4-7", "8-11", "12-15"} {
				if got := topology.FormatList(topo.NumaNodes[n].Cpus); got != want {
					t.Errorf("node %d CPUs %s, want %s", n, got, want)
				}
			}
			if p := cpuByID(t, topo, 8).PackageId; p != 1 {
				t.Errorf("cpu8 on package %d, want 1", p)
			}
		},
	}, {
		name: "Server2Socket4NodesInterleaved", machine: topologytest.Server2Socket4NodesInterleaved(),
		cpus: 96, sockets: 2, dies: 2, nodes: 4,
		caches: map[uint32]int{1: 96, 2: 48, 3: 4},
		check: func(t *testing.T, topo *abi.Topology) {
			if p0, p1 := cpuByID(t, topo, 0).PackageId, cpuByID(t, topo, 1).PackageId; p0 != 0 || p1 != 1 {
				t.Errorf("cpu0, cpu1 on packages %d, %d; want alternating", p0, p1)
			}
			wantSlice(t, "cpu0 siblings", cpuByID(t, topo, 0).ThreadSiblings, 0, 48)
			// Node 0 holds socket 0's first 12 cores: even ids 0-22, 48-70.
			n0 := topo.NumaNodes[0].Cpus
			if len(n0) != 24 || n0[0] != 0 || n0[11] != 22 || n0[12] != 48 || n0[23] != 70 {
				t.Errorf("node 0 CPUs %s", topology.FormatList(n0))
			}
			if l3 := cacheOf(t, topo, 2, 3, uni); !slices.Equal(l3.Cpus, n0) {
				t.Errorf("cpu2's L3 %s, want node 0's CPUs", topology.FormatList(l3.Cpus))
			}
			wantDistances(t, topo.NumaNodes[0], 10, 12, 21, 21)
			wantDistances(t, topo.NumaNodes[3], 21, 21, 12, 10)
			if h := topo.NumaNodes[1].HugepagesTotal; !maps.Equal(h, map[uint64]uint64{2 << 20: 512, gib: 0}) {
				t.Errorf("node 1 hugepages %v", h)
			}
			wantPCI(t, topo, "0000:17:00.1", u32p(0), "0000:16:02.0", "mlx5_core")
			wantPCI(t, topo, "0000:b1:00.0", u32p(2), "0000:b0:02.0", "ice")
			wantPCI(t, topo, "0000:b2:00.0", u32p(2), "0000:b0:04.0", "")
			if d := pciByAddr(t, topo, "0000:b1:00.0"); len(d.LocalCpus) != 24 || d.LocalCpus[0] != 1 {
				t.Errorf("0000:b1:00.0 local CPUs %s", topology.FormatList(d.LocalCpus))
			}
			wantNIC(t, topo, "ens1f0", "0000:17:00.0", u32p(0), "0000:16:02.0", false, true)
			wantNIC(t, topo, "ens1f1", "0000:17:00.1", u32p(0), "0000:16:02.0", false, false)
			wantNIC(t, topo, "ens2f0", "0000:b1:00.0", u32p(2), "0000:b0:02.0", false, true)
			if mtu := netIf(t, topo, "ens1f1").Mtu; mtu != 9000 {
				t.Errorf("ens1f1 MTU %d", mtu)
			}
		},
	}, {
		name: "Server4Socket144CPU", machine: topologytest.Server4Socket144CPU(),
		cpus: 144, sockets: 4, dies: 8, nodes: 8,
		caches: map[uint32]int{1: 144, 2: 72, 3: 8},
		check: func(t *testing.T, topo *abi.Topology) {
			wantSlice(t, "cpu5 siblings", cpuByID(t, topo, 5).ThreadSiblings, 5, 77)
			for id, want := range map[uint32][3]uint32{8: {0, 0, 0}, 9: {0, 1, 1}, 18: {1, 0, 2}, 143: {3, 1, 7}} {
				c := cpuByID(t, topo, id)
				if got := [3]uint32{c.PackageId, c.DieId, c.NumaNode}; got != want {
					t.Errorf("cpu%d package/die/node %v, want %v", id, got, want)
				}
			}
			if c := cpuByID(t, topo, 9); c.CoreId != 9 {
				t.Errorf("cpu9 core_id %d", c.CoreId)
			}
			wantDistances(t, topo.NumaNodes[0], 10, 12, 32, 32, 32, 32, 32, 32)
			wantNIC(t, topo, "ens5f0", "0000:5e:00.0", u32p(1), "0000:5d:00.0", false, true)
		},
	}, {
		name: "PMEM112CPUIsolated", machine: topologytest.PMEM112CPUIsolated(),
		cpus: 112, sockets: 2, dies: 2, nodes: 4, isolated: "2-3,58-59",
		caches: map[uint32]int{1: 112, 2: 56, 3: 2},
		check: func(t *testing.T, topo *abi.Topology) {
			wantSlice(t, "cpu2 siblings", cpuByID(t, topo, 2).ThreadSiblings, 2, 58)
			kinds := []abi.MemoryKind{abi.MemoryKind_MEMORY_KIND_DRAM, abi.MemoryKind_MEMORY_KIND_DRAM,
				abi.MemoryKind_MEMORY_KIND_PMEM, abi.MemoryKind_MEMORY_KIND_PMEM}
			for i, n := range topo.NumaNodes {
				if n.MemoryKind != kinds[i] {
					t.Errorf("node %d kind %v, want %v", n.Id, n.MemoryKind, kinds[i])
				}
			}
			if n := topo.NumaNodes[2]; len(n.Cpus) != 0 || n.MemoryBytes != 768*gib {
				t.Errorf("PMEM node 2: %v", n)
			}
			wantDistances(t, topo.NumaNodes[2], 17, 28, 10, 28)
		},
	}, {
		name: "HybridLaptop", machine: topologytest.HybridLaptop(),
		cpus: 20, sockets: 1, dies: 1, nodes: 1,
		caches: map[uint32]int{1: 28, 2: 8, 3: 1},
		check: func(t *testing.T, topo *abi.Topology) {
			types := map[abi.CoreType]string{}
			var p, e []uint32
			for _, c := range topo.Cpus {
				switch c.CoreType {
				case abi.CoreType_CORE_TYPE_PERFORMANCE:
					p = append(p, c.Id)
				case abi.CoreType_CORE_TYPE_EFFICIENT:
					e = append(e, c.Id)
				default:
					types[c.CoreType] += "x"
				}
			}
			if topology.FormatList(p) != "0-11" || topology.FormatList(e) != "12-19" || len(types) != 0 {
				t.Errorf("P cores %v, E cores %v, others %v", p, e, types)
			}
			wantSlice(t, "cpu0 siblings", cpuByID(t, topo, 0).ThreadSiblings, 0, 1)
			wantSlice(t, "cpu12 siblings", cpuByID(t, topo, 12).ThreadSiblings, 12)
			if l2 := cacheOf(t, topo, 13, 2, uni); topology.FormatList(l2.Cpus) != "12-15" || l2.SizeBytes != 2<<20 {
				t.Errorf("cpu13's L2 %v", l2)
			}
			if c := cpuByID(t, topo, 16); c.ClusterId != 7 {
				t.Errorf("cpu16 cluster %d, want 7", c.ClusterId)
			}
			wantNIC(t, topo, "eth0", "0000:00:03.0", nil, "0000:00:03.0", false, true)
			wantNIC(t, topo, "wlp0s20f3", "0000:00:14.3", nil, "0000:00:14.3", false, true)
		},
	}, {
		name: "Sparse4096CPU8Socket", machine: topologytest.Sparse4096CPU8Socket(),
		cpus: 4080, offline: "5040-5055", sockets: 8, dies: 8, nodes: 16,
		caches: map[uint32]int{1: 4096, 2: 2048, 3: 128},
		check: func(t *testing.T, topo *abi.Topology) {
			ids := make([]uint32, len(topo.Cpus))
			for i, c := range topo.Cpus {
				ids[i] = c.Id
			}
			// 256 ids per socket block, then a gap of 64.
			if got := topology.FormatList(ids); !strings.HasPrefix(got, "0-255,320-575,640-895,960-1215,") {
				t.Errorf("online CPUs %q", got)
			}
			if c := cpuByID(t, topo, 320); c.PackageId != 1 || c.NumaNode != 2 {
				t.Errorf("cpu320 package %d node %d", c.PackageId, c.NumaNode)
			}
			// cpu2480's sibling is offline.
			wantSlice(t, "cpu2480 siblings", cpuByID(t, topo, 2480).ThreadSiblings, 2480)
			if l3 := cacheOf(t, topo, 2480, 3, uni); len(l3.Cpus) != 16 {
				t.Errorf("last L3 group has %d CPUs, want 16", len(l3.Cpus))
			}
			if l3 := cacheOf(t, topo, 0, 3, uni); len(l3.Cpus) != 32 {
				t.Errorf("first L3 group has %d CPUs, want 32", len(l3.Cpus))
			}
			wantNIC(t, topo, "ens8np0", "0000:c1:00.0", u32p(15), "0000:c0:01.1", false, true)
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo := discover(t, write(t, tc.machine))
			if len(topo.Cpus) != tc.cpus {
				t.Errorf("%d CPUs, want %d", len(topo.Cpus), tc.cpus)
			}
			if got := topology.FormatList(topo.OfflineCpus); got != tc.offline {
				t.Errorf("offline %q, want %q", got, tc.offline)
			}
			if got := distinct(topo, func(c *abi.CPU) uint32 { return c.PackageId }); got != tc.sockets {
				t.Errorf("%d sockets, want %d", got, tc.sockets)
			}
			if got := distinct(topo, func(c *abi.CPU) [2]uint32 { return [2]uint32{c.PackageId, c.DieId} }); got != tc.dies {
				t.Errorf("%d dies, want %d", got, tc.dies)
			}
			if len(topo.NumaNodes) != tc.nodes {
				t.Errorf("%d nodes, want %d", len(topo.NumaNodes), tc.nodes)
			}
			if got := countCaches(topo); !maps.Equal(got, tc.caches) {
				t.Errorf("caches per level %v, want %v", got, tc.caches)
			}
			var isolated []uint32
			for _, c := range topo.Cpus {
				if c.Isolated {
					isolated = append(isolated, c.Id)
				}
				if len(c.CacheIds) != 4 {
					t.Errorf("cpu%d has %d caches, want 4", c.Id, len(c.CacheIds))
				}
			}
			if got := topology.FormatList(isolated); got != tc.isolated {
				t.Errorf("isolated %q, want %q", got, tc.isolated)
			}
			tc.check(t, topo)
		})
	}
}

// TestDeterministic discovers each fixture twice, from two separately
// written trees, and wants equal messages.
func TestDeterministic(t *testing.T) {
	for name, m := range map[string]topologytest.Machine{
		"Server2Socket4NodesInterleaved": topologytest.Server2Socket4NodesInterleaved(),
		"PMEM112CPUIsolated":             topologytest.PMEM112CPUIsolated(),
		"HybridLaptop":                   topologytest.HybridLaptop(),
	} {
		t.Run(name, func(t *testing.T) {
			a := discover(t, write(t, m))
			b := discover(t, write(t, m))
			if !proto.Equal(a, b) {
				t.Error("two discoveries differ")
			}
			ba, _ := proto.MarshalOptions{Deterministic: true}.Marshal(a)
			bb, _ := proto.MarshalOptions{Deterministic: true}.Marshal(b)
			if string(ba) != string(bb) {
				t.Error("deterministic encodings differ")
			}
		})
	}
}
