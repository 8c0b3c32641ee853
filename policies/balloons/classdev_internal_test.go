package balloons

import (
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestParseClassDevice: /sys/class/CLASS/NAME is a class device by
// CLASS/NAME, /sys/class/net/IFACE still a network interface; a path
// shorter or longer than that is refused.
func TestParseClassDevice(t *testing.T) {
	for _, tc := range []struct {
		path string
		want device
	}{
		{"/sys/class/drm/card0", device{kind: devClass, name: "drm/card0"}},
		{"/sys/class/drm/renderD128/", device{kind: devClass, name: "drm/renderD128"}},
		{"/sys/class/infiniband/mlx5_0", device{kind: devClass, name: "infiniband/mlx5_0"}},
		{"/sys/class/net/eth0", device{kind: devNet, name: "eth0"}},
	} {
		if got, err := parseDevice(tc.path); err != nil || got != tc.want {
			t.Errorf("parseDevice(%q) = %+v, %v; want %+v", tc.path, got, err, tc.want)
		}
	}
	for _, path := range []string{"/sys/class/drm", "/sys/class/drm/card0/device", "/sys/class"} {
		if got, err := parseDevice(path); err == nil || !strings.Contains(err.Error(), "/sys/class/CLASS/NAME") {
			t.Errorf("parseDevice(%q) = %+v, %v; want a refusal listing /sys/class/CLASS/NAME", path, got, err)
		}
	}
}

// TestClassDeviceCPUs: a class device is as close as the PCI function
// listing it: the GPU's and the RDMA device's node, the NVMe's nested
// block device every CPU (no affinity); a class device no function lists
// (a virtual one, an unknown one) is not found.
func TestClassDeviceCPUs(t *testing.T) {
	for _, tc := range []struct {
		machine, path, pci string // pci: the same device's PCI path; "" when not found
	}{
		{"Server2Socket4NodesInterleaved", "/sys/class/drm/card0", "/sys/bus/pci/devices/0000:b2:00.0"},
		{"Server2Socket4NodesInterleaved", "/sys/class/drm/renderD128", "/sys/bus/pci/devices/0000:b2:00.0"},
		{"Server2Socket4NodesInterleaved", "/sys/class/infiniband/mlx5_0", "/sys/bus/pci/devices/0000:17:00.0"},
		{"Desktop1Socket", "/sys/class/block/nvme0n1", "/sys/bus/pci/devices/0000:01:00.0"},
		{"Server2Socket4NodesInterleaved", "/sys/class/tty/tty0", ""},
		{"Server2Socket4NodesInterleaved", "/sys/class/drm/card1", ""},
		{"Desktop1Socket", "/sys/class/drm/card0", ""},
	} {
		topo := policytest.Machine(t, tc.machine)
		got, found := deviceCPUsOn(t, topo, tc.path)
		if tc.pci == "" {
			if found {
				t.Errorf("%s %s: found with CPUs %s; want no such device", tc.machine, tc.path, got)
			}
			continue
		}
		want, _ := deviceCPUsOn(t, topo, tc.pci)
		if !found || !got.Equal(want) || got.IsEmpty() {
			t.Errorf("%s %s: CPUs %s (found %v); want %s's %s", tc.machine, tc.path, got, found, tc.pci, want)
		}
	}
}

// TestUnknownClassDeviceIgnored: on a v1.5 host a class device no PCI
// function lists is logged and no preference, as an unknown interface is
// (nri-plugins logs that it finds no topology for it and goes on).
func TestUnknownClassDeviceIgnored(t *testing.T) {
	ix, err := newTopoIndex(policytest.Machine(t, "Server2Socket4NodesInterleaved"))
	if err != nil {
		t.Fatal(err)
	}
	ix.hostMinor = abi.MinorClassDevices
	cfg, err := ParseConfig([]byte("balloonTypes:\n- name: gpu\n  preferCloseToDevices: [/sys/class/tty/tty0, /sys/class/drm/card0]\n"))
	if err != nil {
		t.Fatal(err)
	}
	rec := recordLog(t)
	s, err := newState(cfg, ix, "")
	if err != nil {
		t.Fatal(err)
	}
	want := `WARN balloon type "gpu": config.balloonTypes[0].preferCloseToDevices[0] "/sys/class/tty/tty0": the node has no such device; ignored`
	if strings.Join(rec.msgs, "\n") != want {
		t.Errorf("logged %q, want %q", rec.msgs, want)
	}
	if p := s.byName["gpu"].opts.prefer; len(p) != 1 || !p[0].Equal(ix.NodeCPUs(2)) {
		t.Errorf("preferred %v, want only drm/card0's node 2", p)
	}
}
