package topologytest

import abi "github.com/nriwasm/nriwasm/abi/v1"

// Desktop1Socket: 8 cores, 16 threads (cpuN and cpuN+8 are siblings), one
// node, one L3, cpufreq; an onboard NIC and an NVMe drive (class devices
// nvme/nvme0 and, below it, block/nvme0n1) below a root port.
func Desktop1Socket() Machine {
	return Machine{
		Sockets: 1, CoresPerNode: 8, ThreadsPerCore: 2,
		MemPerNodeGiB: 32,
		Freq:          &Freq{MinKHz: 800000, MaxKHz: 4700000, BaseKHz: 3600000},
		PCI: []PCIDev{
			{Address: "0000:00:1f.6", Vendor: "0x8086", Device: "0x15fa", Class: "0x020000", Node: -1, Driver: "e1000e"},
			{Address: "0000:01:00.0", Root: "0000:00:1d.0", Vendor: "0x144d", Device: "0xa80a", Class: "0x010802", Node: -1, Driver: "nvme",
				ClassDevices: []ClassDev{{Entry: "nvme/nvme0"}, {Entry: "block/nvme0n1", Dir: "nvme/nvme0/nvme0n1"}}},
		},
		NICs: []NIC{
			{Name: "eno1", PCI: "0000:00:1f.6", MAC: "3c:7c:3f:00:00:01", Up: true},
			{Name: "lo", MAC: "00:00:00:00:00:00", MTU: 65536, Up: true},
			{Name: "docker0", MAC: "02:42:ac:11:00:01"},
		},
	}
}

// Server2Socket4NodesInterleaved: 2 sockets in SNC2 mode (2 nodes each), 12
// cores per node, 2 threads, 96 CPUs numbered alternating sockets; NICs on
// socket 0 (node 0, with RDMA device infiniband/mlx5_0) and socket 1 (node
// 2), behind root ports, and a GPU on node 2 (drm/card0, drm/renderD128);
// tty/tty0 and misc/fuse are class devices of no PCI function.
func Server2Socket4NodesInterleaved() Machine {
	return Machine{
		Sockets: 2, NodesPerDie: 2, CoresPerNode: 12, ThreadsPerCore: 2,
		Interleaved:   true,
		MemPerNodeGiB: 64,
		HugePages2M:   512,
		PCI: []PCIDev{
			{Address: "0000:17:00.0", Root: "0000:16:02.0", Vendor: "0x15b3", Device: "0x1017", Class: "0x020000", Node: 0, Driver: "mlx5_core",
				ClassDevices: []ClassDev{{Entry: "infiniband/mlx5_0"}}},
			{Address: "0000:17:00.1", Root: "0000:16:02.0", Vendor: "0x15b3", Device: "0x1017", Class: "0x020000", Node: 0, Driver: "mlx5_core"},
			{Address: "0000:b1:00.0", Root: "0000:b0:02.0", Vendor: "0x8086", Device: "0x1592", Class: "0x020000", Node: 2, Driver: "ice"},
			{Address: "0000:b2:00.0", Root: "0000:b0:04.0", Vendor: "0x10de", Device: "0x2330", Class: "0x030200", Node: 2,
				ClassDevices: []ClassDev{{Entry: "drm/card0"}, {Entry: "drm/renderD128"}}},
		},
		VirtualClassDevices: []string{"tty/tty0", "misc/fuse"},
		NICs: []NIC{
			{Name: "ens1f0", PCI: "0000:17:00.0", MAC: "b8:ce:f6:00:00:10", MTU: 9000, Up: true},
			{Name: "ens1f1", PCI: "0000:17:00.1", MAC: "b8:ce:f6:00:00:11", MTU: 9000},
			{Name: "ens2f0", PCI: "0000:b1:00.0", MAC: "40:a6:b7:00:00:20", Up: true},
			{Name: "lo", MAC: "00:00:00:00:00:00", MTU: 65536, Up: true},
		},
	}
}

// Server4Socket144CPU: 4 sockets of 2 dies, one node per die (8 nodes), 9
// cores per node, 2 threads.
func Server4Socket144CPU() Machine {
	return Machine{
		Sockets: 4, DiesPerSocket: 2, CoresPerNode: 9, ThreadsPerCore: 2,
		MemPerNodeGiB: 96,
		PCI: []PCIDev{
			{Address: "0000:5e:00.0", Root: "0000:5d:00.0", Vendor: "0x8086", Device: "0x159b", Class: "0x020000", Node: 1, Driver: "ice"},
		},
		NICs: []NIC{{Name: "ens5f0", PCI: "0000:5e:00.0", MAC: "b4:96:91:00:00:01", Up: true}},
	}
}

// Server4Socket144CPUNoSNC is the topology of nri-plugins' fixture
// 4-socket-server-nosnc (pkg/sysfs testdata): 4 sockets of one NUMA node
// each, 18 cores of 2 threads per socket; socket s holds cpu18s-18s+17 and
// their siblings 72 higher; about 188 GiB per node.
func Server4Socket144CPUNoSNC() Machine {
	return Machine{
		Sockets: 4, CoresPerNode: 18, ThreadsPerCore: 2,
		MemPerNodeGiB: 188,
		Freq:          &Freq{MinKHz: 1000000, MaxKHz: 3700000},
	}
}

// PMEM112CPUIsolated: 2 sockets of 28 cores, 2 threads (112 CPUs), a PMEM
// node per socket (nodes 2 and 3), and cores 2-3 of socket 0 isolated with
// their siblings.
func PMEM112CPUIsolated() Machine {
	return Machine{
		Sockets: 2, CoresPerNode: 28, ThreadsPerCore: 2,
		MemPerNodeGiB: 192,
		CPULessNodes: []CPULessNode{
			{Kind: abi.MemoryKind_MEMORY_KIND_PMEM, Socket: 0, SizeGiB: 768},
			{Kind: abi.MemoryKind_MEMORY_KIND_PMEM, Socket: 1, SizeGiB: 768},
		},
		Isolated: "2-3,58-59",
	}
}

// HybridLaptop: 6 P cores (2 threads each, cpu0-11) and 8 E cores in 2 L2
// clusters (cpu12-19), one node, a virtio NIC and a Wi-Fi NIC.
func HybridLaptop() Machine {
	return Machine{
		Hybrid:        &Hybrid{PCores: 6, ECores: 8},
		MemPerNodeGiB: 16,
		Freq:          &Freq{MinKHz: 400000, MaxKHz: 4700000, BaseKHz: 2100000},
		PCI: []PCIDev{
			{Address: "0000:00:14.3", Vendor: "0x8086", Device: "0x51f0", Class: "0x028000", Node: -1, Driver: "iwlwifi"},
			{Address: "0000:00:03.0", Vendor: "0x1af4", Device: "0x1041", Class: "0x020000", Node: -1, Driver: "virtio-pci"},
		},
		NICs: []NIC{
			{Name: "wlp0s20f3", PCI: "0000:00:14.3", MAC: "f8:9e:94:00:00:01", Up: true},
			{Name: "eth0", PCI: "0000:00:03.0", Virtio: true, MAC: "52:54:00:12:34:56", Up: true},
		},
	}
}

// Sparse4096CPU8Socket: 8 sockets, 2 nodes each, 128 cores per node, 2
// threads: 4,096 CPUs with 64 unused ids after each socket's block of
// threads and the last 16 CPUs offline (4,080 online); 8 L3 groups per
// node.
func Sparse4096CPU8Socket() Machine {
	return Machine{
		Sockets: 8, NodesPerDie: 2, CoresPerNode: 128, ThreadsPerCore: 2,
		MemPerNodeGiB: 256,
		L3PerNode:     8,
		Sparse:        &Sparse{Gap: 64, OfflineLast: 16},
		PCI: []PCIDev{
			{Address: "0000:c1:00.0", Root: "0000:c0:01.1", Vendor: "0x15b3", Device: "0x101d", Class: "0x020000", Node: 15, Driver: "mlx5_core"},
		},
		NICs: []NIC{{Name: "ens8np0", PCI: "0000:c1:00.0", MAC: "0c:42:a1:00:00:01", Up: true}},
	}
}

// N4C16 is nri-plugins' e2e machine n4c16 (a QEMU guest): 2 sockets of 2
// nodes, 2 cores per node, 2 threads numbered consecutively: node0 is
// cpu0-3, cpu0 and cpu1 are siblings; 2 GiB per node.
func N4C16() Machine {
	return Machine{
		Sockets: 2, NodesPerDie: 2, CoresPerNode: 2, ThreadsPerCore: 2,
		ThreadsAdjacent: true,
		MemPerNodeGiB:   2,
	}
}

// N4C128 is nri-plugins' e2e machine n4c128 (a QEMU guest, its
// topology.var.json: 2 packages of 2 nodes, 16 cores per node, 2 threads
// numbered consecutively): node N is cpu32N-32N+31; 2 GiB per node.
func N4C128() Machine {
	return Machine{
		Sockets: 2, NodesPerDie: 2, CoresPerNode: 16, ThreadsPerCore: 2,
		ThreadsAdjacent: true,
		MemPerNodeGiB:   2,
	}
}

// N4C16Atom45 is N4C16 as nri-plugins' test08-cpuprio-allocation sees it
// first (OVERRIDE_SYS_ATOM_CPUS=4-5): cpu4 and cpu5, one core of node 1, are
// efficient cores, the others performance cores.
func N4C16Atom45() Machine {
	m := N4C16()
	m.CoreKinds = &CoreKinds{PCores: "0-3,6-15", ECores: "4-5"}
	return m
}

// N4C16Core0145 is N4C16 as test08-cpuprio-allocation sees it second
// (OVERRIDE_SYS_CORE_CPUS=0-1,4-5): the first core of nodes 0 and 1 are
// performance cores, every other core an efficient one.
func N4C16Core0145() Machine {
	m := N4C16()
	m.CoreKinds = &CoreKinds{PCores: "0-1,4-5", ECores: "2-3,6-15"}
	return m
}

// N4C16EPP is N4C16 with energy-performance preferences (cpufreq's
// energy_performance_preference) that differ within package 0: cpu4-5, a
// core of node 1, "performance"; cpu0-3 and cpu6 "balance_power"; cpu7
// "default". In package 1, cpu8-11 "balance_performance" and cpu12-15
// have no such file.
func N4C16EPP() Machine {
	m := N4C16()
	m.EPP = []EPP{
		{CPUs: []int{4, 5}, Value: "performance"},
		{CPUs: []int{0, 1, 2, 3, 6}, Value: "balance_power"},
		{CPUs: []int{7}, Value: "default"},
		{CPUs: []int{8, 9, 10, 11}, Value: "balance_performance"},
	}
	return m
}

// Reference2Socket is the machine `nriwasm simulate` and `nriwasm check` run
// on when no sysfs tree is named: a 2-socket server of 8 cores per socket, 2
// threads per core (32 CPUs; socket 0 holds cpu0-7 and their siblings
// cpu16-23), one NUMA node of 64 GiB per socket, a NIC on each socket and an
// NVMe drive on socket 0.
func Reference2Socket() Machine {
	return Machine{
		Sockets: 2, CoresPerNode: 8, ThreadsPerCore: 2,
		MemPerNodeGiB: 64,
		Freq:          &Freq{MinKHz: 800000, MaxKHz: 3900000, BaseKHz: 2100000},
		PCI: []PCIDev{
			{Address: "0000:18:00.0", Root: "0000:17:02.0", Vendor: "0x8086", Device: "0x1592", Class: "0x020000", Node: 0, Driver: "ice"},
			{Address: "0000:19:00.0", Root: "0000:17:04.0", Vendor: "0x144d", Device: "0xa824", Class: "0x010802", Node: 0, Driver: "nvme"},
			{Address: "0000:af:00.0", Root: "0000:ae:02.0", Vendor: "0x15b3", Device: "0x1017", Class: "0x020000", Node: 1, Driver: "mlx5_core"},
		},
		NICs: []NIC{
			{Name: "ens1f0", PCI: "0000:18:00.0", MAC: "40:a6:b7:00:00:01", Up: true},
			{Name: "ens5f0", PCI: "0000:af:00.0", MAC: "b8:ce:f6:00:00:02", MTU: 9000, Up: true},
			{Name: "lo", MAC: "00:00:00:00:00:00", MTU: 65536, Up: true},
		},
	}
}

// S8C4K is nri-plugins' e2e machine s8c4k (a QEMU guest): 8 packages of 512
// single-thread cores, one NUMA node each (2 GiB), booted with cpu0-2 and
// with cpu511, cpu1535 and cpu4095 hot-plugged: 6 CPUs online, on packages
// 0, 2 and 7.
func S8C4K() Machine {
	return Machine{
		Sockets: 8, CoresPerNode: 512, ThreadsPerCore: 1,
		MemPerNodeGiB: 2,
		Sparse:        &Sparse{Online: []int{0, 1, 2, 511, 1535, 4095}},
	}
}

// TwoCPU is the smallest node a policy must serve: one socket, one node,
// two single-thread cores, 4 GiB.
func TwoCPU() Machine {
	return Machine{Sockets: 1, CoresPerNode: 2, ThreadsPerCore: 1, MemPerNodeGiB: 4}
}

// TwoL3 is one socket of 8 two-thread cores whose node holds two L3 caches
// (4 cores each), as on AMD CCX parts: the topology-aware policy builds L3
// cache pools below such a node.
func TwoL3() Machine {
	return Machine{Sockets: 1, CoresPerNode: 8, ThreadsPerCore: 2, L3PerNode: 2, MemPerNodeGiB: 16}
}

// HBMAndPMEM is two sockets of 4 single-thread cores with, besides their
// DRAM, a CPU-less HBM node on socket 0 and a CPU-less PMEM node on each
// socket.
func HBMAndPMEM() Machine {
	return Machine{Sockets: 2, CoresPerNode: 4, ThreadsPerCore: 1, MemPerNodeGiB: 16,
		CPULessNodes: []CPULessNode{
			{Kind: abi.MemoryKind_MEMORY_KIND_HBM, Socket: 0, SizeGiB: 16},
			{Kind: abi.MemoryKind_MEMORY_KIND_PMEM, Socket: 0, SizeGiB: 64},
			{Kind: abi.MemoryKind_MEMORY_KIND_PMEM, Socket: 1, SizeGiB: 64},
		}}
}

// N6HBMCXL is nri-plugins' e2e machine n6-hbm-cxl (a QEMU guest, its
// topology.var.json): 2 packages of one node, 2 cores of 2 threads each, 2 GiB
// per node; CPU-less nodes 2 and 3 of 1 GiB next to package 0 and 1 (distance
// 15), and nodes 4 and 5 of 4 GiB far from them (distance 60). The guest
// shows no dax device and no memory tier apart from DRAM's, so nri-plugins
// tells HBM from PMEM by size; here nodes 2 and 3 are in a memory tier
// faster than DRAM's, as an HBM node is (our host reads kinds by device,
// tier, then distance: host/topology/RATIONALE.md), and nodes 4 and 5 carry
// PMEM's devices.
func N6HBMCXL() Machine {
	return Machine{
		Sockets: 2, CoresPerNode: 2, ThreadsPerCore: 2,
		ThreadsAdjacent: true,
		MemPerNodeGiB:   2,
		CPULessNodes: []CPULessNode{
			{Kind: abi.MemoryKind_MEMORY_KIND_HBM, Socket: 0, SizeGiB: 1, Distance: 15},
			{Kind: abi.MemoryKind_MEMORY_KIND_HBM, Socket: 1, SizeGiB: 1, Distance: 15},
			{Kind: abi.MemoryKind_MEMORY_KIND_PMEM, Socket: 0, SizeGiB: 4, Distance: 60},
			{Kind: abi.MemoryKind_MEMORY_KIND_PMEM, Socket: 1, SizeGiB: 4, Distance: 60},
		},
	}
}
