package topology_test

import (
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// capturedVM is a subset of a real VM's /sys (see its README.md).
const capturedVM = "testdata/captured-vm"

// TestCaptureVM refreshes testdata/captured-vm from this machine's /sys. It
// runs only on request, on a small VM (at most topologytest.MaxCaptureFiles
// files):
//
//	TOPOLOGY_CAPTURE=1 go test ./host/topology -run TestCaptureVM
//
// Regular files land in captured-vm/sys, where their links resolve; the
// links themselves are listed in captured-vm/symlinks.txt and recreated by
// topologytest.Restore. Update the facts TestCapturedVM checks, and the
// README, by hand afterwards.
func TestCaptureVM(t *testing.T) {
	if os.Getenv("TOPOLOGY_CAPTURE") != "1" {
		t.Skip("set TOPOLOGY_CAPTURE=1 to recapture testdata/captured-vm from /sys")
	}
	if err := os.RemoveAll(filepath.Join(capturedVM, "sys")); err != nil {
		t.Fatal(err)
	}
	if err := topologytest.Capture("/sys", capturedVM); err != nil {
		t.Fatal(err)
	}
}

// TestCapturedVM discovers the captured tree and checks facts read off the
// VM by hand (cat, ls -l, readlink under /sys when it was captured).
func TestCapturedVM(t *testing.T) {
	root := tempDir(t)
	if err := topologytest.Restore(capturedVM, root); err != nil {
		t.Fatal(err)
	}
	topo := discover(t, root)

	if len(topo.Cpus) != 2 || len(topo.OfflineCpus) != 0 {
		t.Fatalf("%d CPUs, offline %v; want 2 and none", len(topo.Cpus), topo.OfflineCpus)
	}
	for i, c := range topo.Cpus {
		id := uint32(i)
		// cluster_id reads 65535 (x86's "no L2 cluster" value): 0.
		if c.Id != id || c.PackageId != 0 || c.DieId != 0 || c.ClusterId != 0 || c.CoreId != id ||
			len(c.ThreadSiblings) != 1 || c.ThreadSiblings[0] != id || c.NumaNode != 0 ||
			len(c.CacheIds) != 0 || c.MaxFreqKhz != 0 || c.Isolated || c.CoreType != abi.CoreType_CORE_TYPE_UNSPECIFIED {
			t.Errorf("cpu%d: %v", i, c)
		}
	}
	if len(topo.Caches) != 0 {
		t.Errorf("caches %v; the VM exposes no cache directories", topo.Caches)
	}
	if len(topo.NumaNodes) != 1 {
		t.Fatalf("%d nodes", len(topo.NumaNodes))
	}
	n := topo.NumaNodes[0]
	if n.MemoryBytes != 5990176<<10 || topology.FormatList(n.Cpus) != "0-1" || n.MemoryKind != abi.MemoryKind_MEMORY_KIND_DRAM ||
		len(n.Distances) != 1 || n.Distances[0].Distance != 10 || !maps.Equal(n.HugepagesTotal, map[uint64]uint64{2 << 20: 0}) {
		t.Errorf("node 0: %v", n)
	}

	var addrs []string
	for _, d := range topo.PciDevices {
		addrs = append(addrs, d.Address)
		if d.NumaNode != nil || d.PcieRoot != d.Address || topology.FormatList(d.LocalCpus) != "0-1" {
			t.Errorf("PCI %s: node %v root %q local %v", d.Address, d.NumaNode, d.PcieRoot, d.LocalCpus)
		}
	}
	if want := []string{"0000:00:00.0", "0000:00:01.0", "0000:00:02.0", "0000:00:03.0", "0000:00:04.0", "0000:00:05.0"}; !slices.Equal(addrs, want) {
		t.Errorf("PCI %v, want %v", addrs, want)
	}
	if d := topo.PciDevices[0]; d.VendorId != "0x8086" || d.DeviceId != "0x0d57" || d.Class != "0x060000" || d.Driver != "" {
		t.Errorf("host bridge %v", d)
	}
	if d := topo.PciDevices[3]; d.VendorId != "0x1af4" || d.DeviceId != "0x1041" || d.Class != "0x020000" || d.Driver != "virtio-pci" {
		t.Errorf("virtio-net function %v", d)
	}

	var names []string
	for _, ni := range topo.NetworkInterfaces {
		names = append(names, ni.Name)
	}
	if want := []string{"eth0", "ifb0", "ifb1", "lo"}; !slices.Equal(names, want) {
		t.Fatalf("interfaces %v, want %v", names, want)
	}
	// eth0 is virtio-net: class/net/eth0 → .../0000:00:03.0/virtio2/net/eth0.
	eth0 := topo.NetworkInterfaces[0]
	if eth0.PciAddress != "0000:00:03.0" || eth0.PcieRoot != "0000:00:03.0" || eth0.NumaNode != nil || eth0.Virtual ||
		!eth0.Up || eth0.Mtu != 1400 || eth0.Mac != "02:fc:00:00:00:01" || len(eth0.Addresses) != 0 {
		t.Errorf("eth0 %v", eth0)
	}
	if ifb := topo.NetworkInterfaces[1]; !ifb.Virtual || ifb.Up || ifb.Mtu != 1500 || ifb.PciAddress != "" {
		t.Errorf("ifb0 %v", ifb)
	}
	if lo := topo.NetworkInterfaces[3]; !lo.Virtual || !lo.Up || lo.Mtu != 65536 || lo.Mac != "00:00:00:00:00:00" {
		t.Errorf("lo %v", lo)
	}
}

// TestRealSysfs runs Discover on this machine's /sys and checks invariants
// only.
func TestRealSysfs(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		t.Skip("no sysfs here:", err)
	}
	topo := discover(t, "")
	t.Logf("%d CPUs, %d nodes, %d caches, %d PCI functions, %d interfaces",
		len(topo.Cpus), len(topo.NumaNodes), len(topo.Caches), len(topo.PciDevices), len(topo.NetworkInterfaces))
	for _, ni := range topo.NetworkInterfaces {
		for _, a := range ni.Addresses {
			if p, err := netip.ParsePrefix(a); err != nil || p.String() != a {
				t.Errorf("%s: address %q not canonical CIDR", ni.Name, a)
			}
		}
	}
}
