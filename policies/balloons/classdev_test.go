package balloons_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestClassDevicePlacesAsPCIPath: on Server2Socket4NodesInterleaved the GPU
// 0000:b2:00.0 (node 2: the odd CPUs 1-23, 49-71) lists drm/card0 and
// drm/renderD128 (PCIDevice.class_devices, ABI v1.5). A type that prefers
// /sys/class/drm/card0 places its containers, and the type beside it
// avoids them, exactly as with the device's PCI path: the class path
// resolves to the function that lists it, as nri-plugins follows the sysfs
// link. Native only: the committed .wasm predates class paths.
func TestClassDevicePlacesAsPCIPath(t *testing.T) {
	const config = `
balloonTypes:
- name: gpu
  namespaces: [gpu]
  preferCloseToDevices: [%s]
- name: app
  namespaces: [app]
`
	place := func(path string) []cpuset.Set {
		h := mustOpen(t, nativeOpen, "Server2Socket4NodesInterleaved", strings.Replace(config, "%s", path, 1))
		h.Create(ctr("g1", 4000).In("gpu"))
		h.Create(ctr("a1", 30000).In("app"))
		h.Create(ctr("g2", 2000).In("gpu"))
		return []cpuset.Set{h.CPUs("g1"), h.CPUs("a1"), h.CPUs("g2")}
	}
	byPCI := place("/sys/bus/pci/devices/0000:b2:00.0")
	for _, path := range []string{"/sys/class/drm/card0", "/sys/class/drm/renderD128"} {
		byClass := place(path)
		for i, id := range []string{"g1", "a1", "g2"} {
			if !byClass[i].Equal(byPCI[i]) {
				t.Errorf("%s: %s has CPUs %s; with the PCI path %s", path, id, byClass[i], byPCI[i])
			}
		}
	}
	node2 := cpuset.New(policytest.Machine(t, "Server2Socket4NodesInterleaved").NumaNodes[2].Cpus...)
	if !byPCI[0].IsSubsetOf(node2) || !byPCI[2].IsSubsetOf(node2) || !byPCI[1].Intersection(byPCI[0]).IsEmpty() {
		t.Errorf("gpu containers on %s, %s, app on %s; want the gpu ones on the GPU's node 2 and app away from them", byPCI[0], byPCI[2], byPCI[1])
	}
}

// TestClassDeviceOldHostRefused: a host older than ABI v1.5 lists no class
// devices, so a class path is refused, naming the entry, the host's version
// and the way out, at Init and at Reconfigure; a PCI path is still taken,
// and a v1.5 host takes the class path. Native only, as above.
func TestClassDeviceOldHostRefused(t *testing.T) {
	const (
		byClass = "balloonTypes:\n- name: a\n- name: gpu\n  preferCloseToDevices: [/sys/class/net/ens2f0, /sys/class/drm/card0]\n"
		byPCI   = "balloonTypes:\n- name: a\n- name: gpu\n  preferCloseToDevices: [/sys/class/net/ens2f0, /sys/bus/pci/devices/0000:b2:00.0]\n"
		field   = "config.balloonTypes[1].preferCloseToDevices[1]"
		msg     = `"/sys/class/drm/card0": the host (ABI v1.4) does not say which PCI device a class device belongs to (since v1.5): update the agent`
	)
	open := func(minor uint32, config string) (*policytest.Runtime, error) {
		return policytest.Open(t, builds.Native(t), &abi.InitRequest{Config: []byte(config), NodeName: "n1",
			Topology: policytest.Machine(t, "Server2Socket4NodesInterleaved"), HostAbiMinor: minor})
	}
	refused := func(what string, err error) {
		t.Helper()
		var pe *abi.PolicyError
		if !errors.As(err, &pe) || pe.Code != abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || pe.Field != field || !strings.Contains(pe.Message, msg) {
			t.Errorf("%s: error %v; want INVALID_ARGUMENT on %s with %q", what, err, field, msg)
		}
	}
	_, err := open(abi.MinorClassDevices-1, byClass)
	refused("Init", err)
	rt, err := open(abi.MinorClassDevices-1, byPCI)
	if err != nil {
		t.Fatalf("Init with the PCI path on a v1.4 host: %v", err)
	}
	refused("Reconfigure", rt.Reconfigure(byClass))
	if _, err := open(abi.MinorClassDevices, byClass); err != nil {
		t.Errorf("Init with the class path on a v1.5 host: %v", err)
	}
}
