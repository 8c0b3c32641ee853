package topology_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// TestClassDevices: each PCI function lists the class entries below its
// directory, the innermost function only (not its root port), nested ones
// too (block/nvme0n1 below nvme/nvme0), and neither network interfaces
// (class/net) nor virtual class devices.
func TestClassDevices(t *testing.T) {
	for _, tc := range []struct {
		machine topologytest.Machine
		want    map[string][]string // by PCI address; every other function lists none
	}{
		{topologytest.Server2Socket4NodesInterleaved(), map[string][]string{
			"0000:17:00.0": {"infiniband/mlx5_0"},
			"0000:b2:00.0": {"drm/card0", "drm/renderD128"},
		}},
		{topologytest.Desktop1Socket(), map[string][]string{
			"0000:01:00.0": {"block/nvme0n1", "nvme/nvme0"},
		}},
		{topologytest.TwoCPU(), nil},
	} {
		topo := discover(t, write(t, tc.machine))
		for _, d := range topo.PciDevices {
			if !slices.Equal(d.ClassDevices, tc.want[d.Address]) {
				t.Errorf("%s: class devices %q, want %q", d.Address, d.ClassDevices, tc.want[d.Address])
			}
		}
	}
}

// TestClassDevicesCapped: past MaxClassEntries entries Discover stops
// matching, logs one warning, and keeps what it matched.
func TestClassDevicesCapped(t *testing.T) {
	root := write(t, topologytest.Server2Socket4NodesInterleaved())
	// "aaa" sorts before "drm": its entries use up the cap.
	dir := filepath.Join(root, "class", "aaa")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range topology.MaxClassEntries {
		if err := os.Symlink("../../devices/virtual/tty/tty0", filepath.Join(dir, fmt.Sprintf("e%05d", i))); err != nil {
			t.Fatal(err)
		}
	}
	var logged bytes.Buffer
	topo := discover(t, root, topology.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	if d := pciByAddr(t, topo, "0000:b2:00.0"); len(d.ClassDevices) != 0 {
		t.Errorf("past the cap: 0000:b2:00.0 lists %q", d.ClassDevices)
	}
	if d := pciByAddr(t, topo, "0000:17:00.0"); len(d.ClassDevices) != 0 {
		t.Errorf("past the cap: 0000:17:00.0 lists %q", d.ClassDevices)
	}
	if s := logged.String(); strings.Count(s, "level=WARN") != 1 || !strings.Contains(s, "first_skipped=class/drm/card0") {
		t.Errorf("log %q: want one warning naming class/drm/card0", s)
	}
}

// TestWithLoggerNil: a nil logger is Discover's error.
func TestWithLoggerNil(t *testing.T) {
	if _, err := topology.Discover(t.TempDir(), topology.WithLogger(nil)); err == nil || !strings.Contains(err.Error(), "logger") {
		t.Errorf("Discover(WithLogger(nil)) = %v, want an error naming the logger", err)
	}
}

// TestClassDevicesStrayEntries: what real class directories hold besides
// device links (drm's version file) and a link that names no device
// directory under the root (absolute, dangling) are no class devices and
// no error.
func TestClassDevicesStrayEntries(t *testing.T) {
	root := write(t, topologytest.Server2Socket4NodesInterleaved())
	if err := os.WriteFile(filepath.Join(root, "class/drm/version"), []byte("drm 1.1.0 20060810\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"class/drm/card9": "/sys/devices/pci0000:b0/0000:b0:04.0/0000:b2:00.0/drm/card9", "class/drm/card8": "../../devices/nowhere/card8"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	topo := discover(t, root)
	if d := pciByAddr(t, topo, "0000:b2:00.0"); !slices.Equal(d.ClassDevices, []string{"drm/card0", "drm/renderD128"}) {
		t.Errorf("0000:b2:00.0: class devices %q, want drm/card0, drm/renderD128", d.ClassDevices)
	}
}
