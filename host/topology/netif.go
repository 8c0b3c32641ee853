package topology

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const netClass = "class/net"

// iffUp is IFF_UP in an interface's flags file.
const iffUp = 0x1

// discoverNetIfs reads class/net/*, sorted by name, and links each interface
// to the PCI function its device link leads to.
func (s *sysfs) discoverNetIfs(pci []*abi.PCIDevice, addrs AddressLookup) ([]*abi.NetworkInterface, error) {
	names, err := s.subdirs(netClass)
	if err != nil {
		return nil, err
	}
	byAddr := make(map[string]*abi.PCIDevice, len(pci))
	for _, d := range pci {
		byAddr[d.Address] = d
	}
	var ifs []*abi.NetworkInterface
	for _, name := range names {
		ni, err := s.readNetIf(name, byAddr)
		if err != nil {
			return nil, err
		}
		if addrs != nil {
			list, err := addrs(name)
			if err != nil {
				return nil, fmt.Errorf("topology: addresses of %s: %w", name, err)
			}
			if ni.Addresses, err = canonicalCIDRs(list); err != nil {
				return nil, fmt.Errorf("topology: addresses of %s: %w", name, err)
			}
		}
		ifs = append(ifs, ni)
	}
	return ifs, nil
}

func (s *sysfs) readNetIf(name string, pci map[string]*abi.PCIDevice) (*abi.NetworkInterface, error) {
	dir := netClass + "/" + name + "/"
	ni := &abi.NetworkInterface{Name: name}
	var err error
	if ni.Mac, _, err = s.read(dir + "address"); err != nil {
		return nil, err
	}
	mtu, _, err := s.readUint(dir+"mtu", 32)
	if err != nil {
		return nil, err
	}
	ni.Mtu = uint32(mtu)
	flags, ok, err := s.read(dir + "flags")
	if err != nil {
		return nil, err
	}
	if ok {
		v, err := strconv.ParseUint(flags, 0, 32)
		if err != nil {
			return nil, s.badContent(dir+"flags", flags, err)
		}
		ni.Up = v&iffUp != 0
	}
	self, ok, err := s.resolve(netClass + "/" + name)
	if err != nil {
		return nil, err
	}
	ni.Virtual = ok && strings.HasPrefix(self, "devices/virtual/")
	dev, ok, err := s.resolve(dir + "device")
	if err != nil || !ok {
		return ni, err
	}
	ni.PciAddress = lastPCIAddress(dev)
	if ni.PciAddress == "" {
		return ni, nil
	}
	if d := pci[ni.PciAddress]; d != nil {
		ni.PcieRoot = d.PcieRoot
		if d.NumaNode != nil {
			node := *d.NumaNode
			ni.NumaNode = &node
		}
	} else {
		ni.PcieRoot = pcieRoot(dev)
	}
	return ni, nil
}

// canonicalCIDRs parses addresses in CIDR form and returns them canonical
// (IPv4-mapped IPv6 unmapped, zones such as "%eth0" dropped), sorted and
// unique.
func canonicalCIDRs(list []string) ([]string, error) {
	var out []string
	for _, a := range list {
		addrPart, bitsPart, ok := strings.Cut(a, "/")
		addr, err := netip.ParseAddr(addrPart)
		if !ok || err != nil {
			return nil, fmt.Errorf("address %q: not in CIDR form", a)
		}
		bits, err := strconv.Atoi(bitsPart)
		if err != nil {
			return nil, fmt.Errorf("address %q: bad prefix length", a)
		}
		addr = addr.WithZone("")
		if addr.Is4In6() {
			addr, bits = addr.Unmap(), bits-96
		}
		p := netip.PrefixFrom(addr, bits)
		if !p.IsValid() {
			return nil, fmt.Errorf("address %q: bad prefix length", a)
		}
		out = append(out, p.String())
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// liveAddresses reads an interface's addresses from the current network
// namespace. An interface that vanished since sysfs listed it has none.
func liveAddresses(name string) ([]string, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		if strings.Contains(err.Error(), "no such network interface") {
			return nil, nil
		}
		return nil, err
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		ones, _ := ipn.Mask.Size()
		ip = ip.Unmap()
		if ip.Is4() && ones > 32 {
			ones -= 96
		}
		out = append(out, netip.PrefixFrom(ip, ones).String())
	}
	return out, nil
}
