package topology_test

import (
	"os"
	"path/filepath"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
)

// localityTree writes a small sysfs tree: an NVMe disk on a PCI device local
// to NUMA node 1 (CPUs 4-7), a RAID built from it and a second disk on node 0,
// a character device whose parent has numa_node -1, and /dev/null's entry
// (char 1:3) on the PCI device of node 1.
func localityTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	file := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(rel, target string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	file("devices/pci0000:40/0000:40:01.0/numa_node", "1")
	file("devices/pci0000:40/0000:40:01.0/local_cpulist", "4-7")
	file("devices/pci0000:40/0000:40:01.0/nvme/nvme0/nvme0n1/size", "1")
	file("devices/pci0000:00/0000:00:02.0/numa_node", "0")
	file("devices/pci0000:00/0000:00:02.0/local_cpulist", "0-3")
	file("devices/pci0000:00/0000:00:02.0/nvme/nvme1/nvme1n1/size", "1")
	file("devices/virtual/block/md0/size", "1")
	link("devices/virtual/block/md0/slaves/nvme0n1", "../../../../pci0000:40/0000:40:01.0/nvme/nvme0/nvme0n1")
	link("devices/virtual/block/md0/slaves/nvme1n1", "../../../../pci0000:00/0000:00:02.0/nvme/nvme1/nvme1n1")
	file("devices/platform/serial0/numa_node", "-1")
	file("devices/platform/serial0/tty/ttyS0/dev", "4:64")
	file("devices/pci0000:40/0000:40:01.0/mem/null/dev", "1:3")
	link("dev/block/259:0", "../../devices/pci0000:40/0000:40:01.0/nvme/nvme0/nvme0n1")
	link("dev/block/9:0", "../../devices/virtual/block/md0")
	link("dev/char/4:64", "../../devices/platform/serial0/tty/ttyS0")
	link("dev/char/1:3", "../../devices/pci0000:40/0000:40:01.0/mem/null")
	return root
}

func TestLocatorDeviceHints(t *testing.T) {
	l, err := topology.NewLocator(localityTree(t))
	if err != nil {
		t.Fatal(err)
	}
	node1 := &abi.TopologyHint{Provider: "/sys/devices/pci0000:40/0000:40:01.0", Cpus: "4-7", Numas: "1"}
	node0 := &abi.TopologyHint{Provider: "/sys/devices/pci0000:00/0000:00:02.0", Cpus: "0-3", Numas: "0"}
	for _, tc := range []struct {
		name         string
		typ          string
		major, minor int64
		want         []*abi.TopologyHint
	}{
		{"disk", "b", 259, 0, []*abi.TopologyHint{node1}},
		{"raid: its members' hints", "b", 9, 0, []*abi.TopologyHint{node1, node0}},
		{"numa_node -1: none", "c", 4, 64, nil},
		{"not in sysfs", "b", 8, 0, nil},
		{"fifo", "p", 1, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.DeviceHints(tc.typ, tc.major, tc.minor)
			if err != nil {
				t.Fatal(err)
			}
			assertHints(t, got, tc.want)
		})
	}
}

func TestLocatorMountHints(t *testing.T) {
	l, err := topology.NewLocator(localityTree(t))
	if err != nil {
		t.Fatal(err)
	}
	// /dev/null is char 1:3 on Linux; the tree puts 1:3 on node 1.
	got, err := l.MountHints("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	assertHints(t, got, []*abi.TopologyHint{{Provider: "/sys/devices/pci0000:40/0000:40:01.0", Cpus: "4-7", Numas: "1"}})
	if got, err := l.MountHints(filepath.Join(t.TempDir(), "missing")); err != nil || got != nil {
		t.Errorf("a missing source: got %v, %v; want no hints, no error", got, err)
	}
}

func TestLocatorBadContent(t *testing.T) {
	root := localityTree(t)
	if err := os.WriteFile(filepath.Join(root, "devices/pci0000:40/0000:40:01.0/local_cpulist"), []byte("4-x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := topology.NewLocator(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.DeviceHints("b", 259, 0); err == nil {
		t.Fatal("a local_cpulist that does not parse: no error")
	}
}

func assertHints(t *testing.T, got, want []*abi.TopologyHint) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d hints %v, want %v", len(got), got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.GetProvider() != w.GetProvider() || g.GetCpus() != w.GetCpus() || g.GetNumas() != w.GetNumas() || g.GetSockets() != w.GetSockets() {
			t.Errorf("hint %d: got %v, want %v", i, g, w)
		}
	}
}
