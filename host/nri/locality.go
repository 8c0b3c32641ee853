package nri

import (
	"strings"

	"github.com/containerd/nri/pkg/api"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Locator resolves where a container's mounts and devices live in the machine
// (*topology.Locator reads sysfs). The plugin asks it in CreateContainer only.
type Locator interface {
	MountHints(source string) ([]*abi.TopologyHint, error)
	DeviceHints(typ string, major, minor int64) ([]*abi.TopologyHint, error)
}

// mountsAndDevices copies c's mounts and Linux devices into out, without
// hints.
func mountsAndDevices(c *api.Container, out *abi.Container) {
	for _, m := range c.GetMounts() {
		out.Mounts = append(out.Mounts, &abi.Mount{
			Source: m.GetSource(), Destination: m.GetDestination(), Type: m.GetType(), Options: m.GetOptions(),
		})
	}
	rules := c.GetLinux().GetResources().GetDevices()
	for _, d := range c.GetLinux().GetDevices() {
		out.Devices = append(out.Devices, &abi.LinuxDevice{
			Path: d.GetPath(), Type: d.GetType(), Major: d.GetMajor(), Minor: d.GetMinor(),
			ReadOnly: readOnlyDevice(rules, d),
		})
	}
}

// readOnlyDevice reads the device cgroup rules as nri-plugins does
// (pkg/resmgr/cache isReadOnlyDevice): in order, a catch-all rule (no type
// and numbers) that allows "w" makes the device writable and the reading
// goes on; the first rule naming the device ends it, writable if it allows
// "w".
func readOnlyDevice(rules []*api.LinuxDeviceCgroup, d *api.LinuxDevice) bool {
	readOnly := true
	for _, r := range rules {
		major, minor := r.GetMajor().GetValue(), r.GetMinor().GetValue()
		switch {
		case r.GetType() == "" && major == 0 && minor == 0:
			if strings.Contains(r.GetAccess(), "w") {
				readOnly = false
			}
		case r.GetType() == d.GetType() && major == d.GetMajor() && minor == d.GetMinor():
			if strings.Contains(r.GetAccess(), "w") {
				readOnly = false
			}
			return readOnly
		}
	}
	return readOnly
}

// locate fills in the hints of out's mounts and devices. A locality that
// cannot be read is logged and left out: a hint helps placement, and its
// absence must not fail a container's creation.
func (p *Plugin) locate(out *abi.Container) {
	l := p.opts.locator
	if l == nil {
		return
	}
	for _, m := range out.Mounts {
		hs, err := l.MountHints(m.Source)
		if err != nil {
			p.log.Info("no topology hints for a mount", "containerID", out.Id, "source", m.Source, "err", err)
		}
		m.Hints = hs
	}
	for _, d := range out.Devices {
		hs, err := l.DeviceHints(d.Type, d.Major, d.Minor)
		if err != nil {
			p.log.Info("no topology hints for a device", "containerID", out.Id, "path", d.Path, "err", err)
		}
		d.Hints = hs
	}
}
