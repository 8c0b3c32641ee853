package nri

import (
	"errors"
	"testing"

	"github.com/containerd/nri/pkg/api"
	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// fakeLocator puts /data and block 259:0 on node 1 and fails for /broken.
type fakeLocator struct{}

var node1 = &abi.TopologyHint{Provider: "/sys/devices/pci0000:40/0000:40:01.0", Cpus: "4-7", Numas: "1"}

func (fakeLocator) MountHints(source string) ([]*abi.TopologyHint, error) {
	switch source {
	case "/data":
		return []*abi.TopologyHint{node1}, nil
	case "/broken":
		return nil, errors.New("bad sysfs")
	}
	return nil, nil
}

func (fakeLocator) DeviceHints(typ string, major, minor int64) ([]*abi.TopologyHint, error) {
	if typ == "b" && major == 259 && minor == 0 {
		return []*abi.TopologyHint{node1}, nil
	}
	return nil, nil
}

func TestMountsAndDevices(t *testing.T) {
	ctr := &api.Container{
		Id: "c",
		Mounts: []*api.Mount{
			{Source: "/data", Destination: "/d", Type: "bind", Options: []string{"rbind", "rw"}},
			{Source: "/broken", Destination: "/b"},
			{Source: "/etc/hosts", Destination: "/etc/hosts", Options: []string{"ro"}},
		},
		Linux: &api.LinuxContainer{
			Devices: []*api.LinuxDevice{
				{Path: "/dev/nvme0n1", Type: "b", Major: 259, Minor: 0},
				{Path: "/dev/ttyS0", Type: "c", Major: 4, Minor: 64},
			},
			Resources: &api.LinuxResources{Devices: []*api.LinuxDeviceCgroup{
				{Allow: false, Access: "rwm"},
				{Allow: true, Type: "b", Major: api.Int64(259), Minor: api.Int64(0), Access: "rw"},
				{Allow: true, Type: "c", Major: api.Int64(4), Minor: api.Int64(64), Access: "r"},
			}},
		},
	}
	out := &abi.Container{Id: "c"}
	mountsAndDevices(ctr, out)
	p := &Plugin{opts: options{locator: fakeLocator{}}, log: logr.Discard()}
	p.locate(out)

	if len(out.Mounts) != 3 || out.Mounts[0].Destination != "/d" || out.Mounts[0].Type != "bind" || len(out.Mounts[0].Options) != 2 {
		t.Fatalf("mounts: %v", out.Mounts)
	}
	if len(out.Mounts[0].Hints) != 1 || out.Mounts[0].Hints[0].Numas != "1" {
		t.Errorf("/data: hints %v, want node 1's", out.Mounts[0].Hints)
	}
	if len(out.Mounts[1].Hints) != 0 || len(out.Mounts[2].Hints) != 0 {
		t.Errorf("/broken, /etc/hosts: hints %v, %v; want none", out.Mounts[1].Hints, out.Mounts[2].Hints)
	}
	if len(out.Devices) != 2 {
		t.Fatalf("devices: %v", out.Devices)
	}
	if d := out.Devices[0]; d.Path != "/dev/nvme0n1" || d.ReadOnly || len(d.Hints) != 1 {
		t.Errorf("nvme: %v, want writable with node 1's hint", d)
	}
	// A catch-all rule with "w" made it writable before its own rule: as
	// nri-plugins reads the rules, the device is writable.
	if d := out.Devices[1]; d.ReadOnly {
		t.Errorf("ttyS0: %v", d)
	}
}

func TestReadOnlyDevice(t *testing.T) {
	d := &api.LinuxDevice{Type: "c", Major: 4, Minor: 64}
	rule := func(typ string, major, minor int64, access string) *api.LinuxDeviceCgroup {
		r := &api.LinuxDeviceCgroup{Type: typ, Access: access}
		if typ != "" {
			r.Major, r.Minor = api.Int64(major), api.Int64(minor)
		}
		return r
	}
	for _, tc := range []struct {
		name  string
		rules []*api.LinuxDeviceCgroup
		want  bool
	}{
		{"no rules", nil, true},
		{"its rule reads only", []*api.LinuxDeviceCgroup{rule("c", 4, 64, "r")}, true},
		{"its rule writes", []*api.LinuxDeviceCgroup{rule("c", 4, 64, "rw")}, false},
		{"catch-all writes", []*api.LinuxDeviceCgroup{rule("", 0, 0, "rwm")}, false},
		{"another device's rule", []*api.LinuxDeviceCgroup{rule("c", 4, 65, "rw")}, true},
		{"first naming rule ends it", []*api.LinuxDeviceCgroup{rule("c", 4, 64, "r"), rule("c", 4, 64, "rw")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readOnlyDevice(tc.rules, d); got != tc.want {
				t.Errorf("readOnlyDevice = %v, want %v", got, tc.want)
			}
		})
	}
}
