package topologytest

import (
	"fmt"
	"path"
	"strings"
)

// hostBridge returns the host bridge directory of a PCI address:
// "0000:3a:02.0" → "pci0000:3a".
func hostBridge(addr string) string {
	dom, rest, _ := strings.Cut(addr, ":")
	bus, _, _ := strings.Cut(rest, ":")
	return "pci" + dom + ":" + bus
}

// pciPath is where a function lives under devices/: below its root port,
// which is below the host bridge.
func pciPath(d PCIDev) string {
	if d.Root == "" || d.Root == d.Address {
		return "devices/" + hostBridge(d.Address) + "/" + d.Address
	}
	return "devices/" + hostBridge(d.Root) + "/" + d.Root + "/" + d.Address
}

// pciDevs returns m.PCI plus a bridge for each root port it does not list.
func (m Machine) pciDevs() []PCIDev {
	listed := map[string]bool{}
	for _, d := range m.PCI {
		listed[d.Address] = true
	}
	devs := append([]PCIDev(nil), m.PCI...)
	for _, d := range m.PCI {
		if d.Root != "" && !listed[d.Root] {
			listed[d.Root] = true
			devs = append(devs, PCIDev{Address: d.Root, Vendor: "0x8086", Device: "0x347a",
				Class: "0x060400", Node: d.Node, Driver: "pcieport"})
		}
	}
	return devs
}

func (m Machine) writePCI(w *writer, cpus []*lcpu) {
	var all []int
	byNode := map[int][]int{}
	for _, c := range cpus {
		if !c.offline {
			all = append(all, c.id)
			byNode[c.node] = append(byNode[c.node], c.id)
		}
	}
	for _, d := range m.pciDevs() {
		p := pciPath(d)
		w.file(p+"/vendor", d.Vendor)
		w.file(p+"/device", d.Device)
		w.file(p+"/class", d.Class)
		w.filef(p+"/numa_node", "%d", d.Node)
		local := all
		if d.Node >= 0 {
			local = byNode[d.Node]
		}
		w.file(p+"/local_cpulist", list(local))
		if d.Driver != "" {
			w.link(p+"/driver", "bus/pci/drivers/"+d.Driver)
		}
		w.link("bus/pci/devices/"+d.Address, p)
	}
}

func (m Machine) writeNICs(w *writer) {
	byAddr := map[string]PCIDev{}
	for _, d := range m.pciDevs() {
		byAddr[d.Address] = d
	}
	for i, n := range m.NICs {
		if _, ok := byAddr[n.PCI]; n.PCI != "" && !ok && w.err == nil {
			w.err = fmt.Errorf("NIC %s: no PCI function %s", n.Name, n.PCI)
		}
		var dir string
		switch {
		case n.PCI == "":
			dir = "devices/virtual/net/" + n.Name
		case n.Virtio:
			parent := fmt.Sprintf("%s/virtio%d", pciPath(byAddr[n.PCI]), i)
			dir = parent + "/net/" + n.Name
			w.link(dir+"/device", parent)
		default:
			parent := pciPath(byAddr[n.PCI])
			dir = parent + "/net/" + n.Name
			w.link(dir+"/device", parent)
		}
		mtu := n.MTU
		if mtu == 0 {
			mtu = 1500
		}
		flags := 0x1002 // IFF_BROADCAST|IFF_MULTICAST
		if n.Up {
			flags |= 0x1
		}
		w.file(dir+"/address", n.MAC)
		w.filef(dir+"/mtu", "%d", mtu)
		w.filef(dir+"/flags", "0x%x", flags)
		w.link("class/net/"+n.Name, dir)
	}
}

// writeClassDevices links each function's class devices and the virtual
// ones from class/CLASS/NAME, as the kernel's class directories do.
func (m Machine) writeClassDevices(w *writer) {
	for _, d := range m.pciDevs() {
		for _, c := range d.ClassDevices {
			dir := c.Dir
			if dir == "" {
				dir = c.Entry
			}
			target := pciPath(d) + "/" + dir
			w.file(target+"/uevent", "DEVNAME="+path.Base(c.Entry))
			w.link("class/"+c.Entry, target)
		}
	}
	for _, e := range m.VirtualClassDevices {
		target := "devices/virtual/" + e
		w.file(target+"/uevent", "DEVNAME="+path.Base(e))
		w.link("class/"+e, target)
	}
}
