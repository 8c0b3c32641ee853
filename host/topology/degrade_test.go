package topology_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// removeGlob deletes what a glob under root matches.
func removeGlob(t *testing.T, root, pattern string) {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil || len(matches) == 0 {
		t.Fatalf("glob %s: %v matches, %v", pattern, len(matches), err)
	}
	for _, m := range matches {
		if err := os.RemoveAll(m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMissingFiles deletes what VMs and old kernels lack and wants Discover
// to succeed with zero values where the data was.
func TestMissingFiles(t *testing.T) {
	small := topologytest.Machine{Sockets: 1, CoresPerNode: 4, ThreadsPerCore: 2, MemPerNodeGiB: 1,
		Sparse: &topologytest.Sparse{OfflineLast: 2}}
	tests := []struct {
		name    string
		machine topologytest.Machine
		remove  []string
		check   func(t *testing.T, topo *abi.Topology)
	}{{
		name: "dies and clusters", machine: topologytest.Server4Socket144CPU(),
		remove: []string{"devices/system/cpu/cpu*/topology/die_id", "devices/system/cpu/cpu*/topology/cluster_id"},
		check: func(t *testing.T, topo *abi.Topology) {
			if n := distinct(topo, func(c *abi.CPU) [2]uint32 { return [2]uint32{c.DieId, c.ClusterId} }); n != 1 || len(topo.Cpus) != 144 {
				t.Errorf("%d die/cluster pairs over %d CPUs", n, len(topo.Cpus))
			}
		},
	}, {
		name: "caches", machine: topologytest.Desktop1Socket(),
		remove: []string{"devices/system/cpu/cpu*/cache"},
		check: func(t *testing.T, topo *abi.Topology) {
			if len(topo.Caches) != 0 || len(topo.Cpus[0].CacheIds) != 0 {
				t.Errorf("caches %v, cpu0 cache ids %v", topo.Caches, topo.Cpus[0].CacheIds)
			}
		},
	}, {
		name: "NUMA directory", machine: topologytest.Server2Socket4NodesInterleaved(),
		remove: []string{"devices/system/node", "devices/virtual/memory_tiering"},
		check: func(t *testing.T, topo *abi.Topology) {
			if len(topo.NumaNodes) != 1 {
				t.Fatalf("%d nodes, want 1", len(topo.NumaNodes))
			}
			n := topo.NumaNodes[0]
			if n.Id != 0 || len(n.Cpus) != 96 || n.MemoryBytes != 0 || n.MemoryKind != abi.MemoryKind_MEMORY_KIND_DRAM ||
				len(n.Distances) != 1 || n.Distances[0].Distance != 10 {
				t.Errorf("node %v", n)
			}
		},
	}, {
		name: "node cpulists (cpuN/nodeM links remain)", machine: topologytest.Server2Socket4NodesInterleaved(),
		remove: []string{"devices/system/node/node*/cpulist"},
		check: func(t *testing.T, topo *abi.Topology) {
			if got := topology.FormatList(topo.NumaNodes[2].Cpus); got != "1,3,5,7,9,11,13,15,17,19,21,23,49,51,53,55,57,59,61,63,65,67,69,71" {
				t.Errorf("node 2 CPUs %s", got)
			}
		},
	}, {
		name: "node online list", machine: topologytest.PMEM112CPUIsolated(),
		remove: []string{"devices/system/node/online"},
		check:  wantNodes(4),
	}, {
		name: "node online, has_memory and has_cpu lists", machine: topologytest.PMEM112CPUIsolated(),
		remove: []string{"devices/system/node/online", "devices/system/node/has_*"},
		check:  wantNodes(4),
	}, {
		name: "node meminfo, distance and hugepages", machine: topologytest.Server2Socket4NodesInterleaved(),
		remove: []string{"devices/system/node/node*/meminfo", "devices/system/node/node*/distance", "devices/system/node/node*/hugepages"},
		check: func(t *testing.T, topo *abi.Topology) {
			n := topo.NumaNodes[1]
			if n.MemoryBytes != 0 || n.Distances != nil || n.HugepagesTotal != nil || n.MemoryKind != abi.MemoryKind_MEMORY_KIND_DRAM {
				t.Errorf("node 1 %v", n)
			}
		},
	}, {
		name: "CPU online and offline lists", machine: small,
		remove: []string{"devices/system/cpu/online", "devices/system/cpu/offline"},
		check: func(t *testing.T, topo *abi.Topology) {
			if len(topo.Cpus) != 6 || topology.FormatList(topo.OfflineCpus) != "6-7" {
				t.Errorf("%d CPUs online, offline %v", len(topo.Cpus), topo.OfflineCpus)
			}
		},
	}, {
		name: "topology directories", machine: topologytest.Desktop1Socket(),
		remove: []string{"devices/system/cpu/cpu*/topology"},
		check: func(t *testing.T, topo *abi.Topology) {
			c := cpuByID(t, topo, 9)
			if c.PackageId != 0 || c.CoreId != 0 || len(c.ThreadSiblings) != 1 || c.ThreadSiblings[0] != 9 {
				t.Errorf("cpu9 %v", c)
			}
		},
	}, {
		name: "cpufreq, isolated, hybrid lists", machine: topologytest.HybridLaptop(),
		remove: []string{"devices/system/cpu/cpu*/cpufreq", "devices/system/cpu/isolated", "devices/cpu_*"},
		check: func(t *testing.T, topo *abi.Topology) {
			for _, c := range topo.Cpus {
				if c.MaxFreqKhz != 0 || c.CoreType != abi.CoreType_CORE_TYPE_UNSPECIFIED || c.Isolated {
					t.Fatalf("cpu%d %v", c.Id, c)
				}
			}
		},
	}, {
		// A cpufreq driver without EPP (acpi-cpufreq, intel_pstate in
		// passive mode): unknown, "".
		name: "energy-performance preference", machine: topologytest.N4C16EPP(),
		remove: []string{"devices/system/cpu/cpu*/cpufreq/energy_performance_preference"},
		check: func(t *testing.T, topo *abi.Topology) {
			for _, c := range topo.Cpus {
				if c.EnergyPerformancePreference != "" {
					t.Errorf("cpu%d energy-performance preference %q, want none", c.Id, c.EnergyPerformancePreference)
				}
			}
		},
	}, {
		name: "PCI and network", machine: topologytest.Desktop1Socket(),
		remove: []string{"bus/pci", "class/net"},
		check: func(t *testing.T, topo *abi.Topology) {
			if len(topo.PciDevices) != 0 || len(topo.NetworkInterfaces) != 0 {
				t.Errorf("PCI %v, network %v", topo.PciDevices, topo.NetworkInterfaces)
			}
		},
	}, {
		name: "PCI bus but not the NIC's device", machine: topologytest.Desktop1Socket(),
		remove: []string{"bus/pci/devices/0000:00:1f.6", "devices/pci0000:00/0000:00:1f.6/numa_node"},
		check: func(t *testing.T, topo *abi.Topology) {
			wantNIC(t, topo, "eno1", "0000:00:1f.6", nil, "0000:00:1f.6", false, true)
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := write(t, tc.machine)
			for _, r := range tc.remove {
				removeGlob(t, root, r)
			}
			tc.check(t, discover(t, root))
		})
	}
}

func wantNodes(n int) func(t *testing.T, topo *abi.Topology) {
	return func(t *testing.T, topo *abi.Topology) {
		if len(topo.NumaNodes) != n {
			t.Errorf("%d nodes, want %d", len(topo.NumaNodes), n)
		}
	}
}

// TestStrayFiles adds files real sysfs has next to the links Discover
// follows.
func TestStrayFiles(t *testing.T) {
	root := write(t, topologytest.Desktop1Socket())
	for _, f := range []string{"class/net/bonding_masters", "bus/pci/devices/stray"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	topo := discover(t, root)
	if len(topo.NetworkInterfaces) != 3 || len(topo.PciDevices) != 3 {
		t.Errorf("%d interfaces, %d PCI functions; want 3, 3", len(topo.NetworkInterfaces), len(topo.PciDevices))
	}
}

// TestMalformed writes bad content into one file and wants an error that
// names the file and quotes the content.
func TestMalformed(t *testing.T) {
	tests := []struct{ file, content string }{
		{"devices/system/cpu/online", "3-1"},
		{"devices/system/cpu/offline", "x"},
		{"devices/system/cpu/isolated", "1,,2"},
		{"devices/system/cpu/cpu1/topology/core_id", "abc"},
		{"devices/system/cpu/cpu1/topology/physical_package_id", "-2"},
		{"devices/system/cpu/cpu0/topology/thread_siblings_list", "0-x"},
		{"devices/system/cpu/cpu0/cache/index0/size", "48Q"},
		{"devices/system/cpu/cpu0/cache/index1/type", "Weird"},
		{"devices/system/cpu/cpu0/cache/index2/level", "two"},
		{"devices/system/cpu/cpu0/cache/index3/shared_cpu_list", "9-0"},
		{"devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "fast"},
		{"devices/system/cpu/cpu0/cpufreq/energy_performance_preference", strings.Repeat("balance_", 5)},
		{"devices/system/node/online", "zz"},
		{"devices/system/node/node0/cpulist", "0-"},
		{"devices/system/node/node0/meminfo", "Node 0 MemTotal: lots kB"},
		{"devices/system/node/node0/distance", "x"},
		{"devices/system/node/node0/distance", "10 12"},
		{"devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "-5"},
		{"devices/virtual/memory_tiering/memory_tier4/nodelist", "a"},
		{"bus/pci/devices/0000:00:1f.6/numa_node", "nope"},
		{"bus/pci/devices/0000:00:1f.6/local_cpulist", "1-0"},
		{"class/net/eno1/mtu", "big"},
		{"class/net/eno1/flags", "0xZZ"},
	}
	for _, tc := range tests {
		t.Run(tc.file+"="+tc.content, func(t *testing.T) {
			root := write(t, topologytest.Desktop1Socket())
			path := filepath.Join(root, tc.file)
			if err := os.WriteFile(path, []byte(tc.content+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			topo, err := topology.Discover(root)
			if err == nil {
				t.Fatalf("no error; cpus %d", len(topo.Cpus))
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, strconv.Quote(tc.content)) {
				t.Errorf("error %q does not name %s and %q", msg, path, tc.content)
			}
		})
	}
}
