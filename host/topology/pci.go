package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const pciDevices = "bus/pci/devices"

// discoverPCI reads every function under bus/pci/devices, sorted by address.
func (s *sysfs) discoverPCI() ([]*abi.PCIDevice, error) {
	names, err := s.subdirs(pciDevices)
	if err != nil {
		return nil, err
	}
	var devs []*abi.PCIDevice
	for _, name := range names { // os.ReadDir sorts by name, so by address
		if !isPCIAddress(name) {
			continue
		}
		d, err := s.readPCI(name)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

func (s *sysfs) readPCI(addr string) (*abi.PCIDevice, error) {
	dir := pciDevices + "/" + addr + "/"
	d := &abi.PCIDevice{Address: addr}
	for _, f := range []struct {
		file string
		dst  *string
	}{{"vendor", &d.VendorId}, {"device", &d.DeviceId}, {"class", &d.Class}} {
		v, _, err := s.read(dir + f.file)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	node, ok, err := s.readID(dir + "numa_node")
	if err != nil {
		return nil, err
	}
	if ok {
		d.NumaNode = &node
	}
	if d.LocalCpus, _, err = s.readList(dir + "local_cpulist"); err != nil {
		return nil, err
	}
	if d.Driver, err = s.linkBase(dir + "driver"); err != nil {
		return nil, err
	}
	resolved, ok, err := s.resolve(pciDevices + "/" + addr)
	if err != nil {
		return nil, err
	}
	if ok {
		d.PcieRoot = pcieRoot(resolved)
	}
	if d.PcieRoot == "" {
		d.PcieRoot = addr
	}
	return d, nil
}

// linkBase returns the last element of a symlink's target, "" when there
// is no such link.
func (s *sysfs) linkBase(rel string) (string, error) {
	target, err := os.Readlink(s.path(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", fmt.Errorf("topology: read link %s: %w", s.path(rel), err)
	}
	return path.Base(target), nil
}

// pcieRoot returns the first PCI address in a resolved device path
// ("devices/pci0000:00/0000:00:01.0/0000:01:00.0" → "0000:00:01.0"): the
// root port or integrated function right below the host bridge.
func pcieRoot(resolved string) string {
	for elem := range strings.SplitSeq(resolved, "/") {
		if isPCIAddress(elem) {
			return elem
		}
	}
	return ""
}

// lastPCIAddress returns the last PCI address in a resolved device path,
// the PCI function a non-PCI child (a virtio device, a USB NIC) hangs off.
func lastPCIAddress(resolved string) string {
	elems := strings.Split(resolved, "/")
	for i := len(elems) - 1; i >= 0; i-- {
		if isPCIAddress(elems[i]) {
			return elems[i]
		}
	}
	return ""
}

// isPCIAddress reports whether s has the form domain:bus:device.function
// with hex digits, "0000:3b:00.0" (domains may have more than 4 digits).
func isPCIAddress(s string) bool {
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || len(dom) < 4 || !isHex(dom) {
		return false
	}
	bus, rest, ok := strings.Cut(rest, ":")
	if !ok || len(bus) != 2 || !isHex(bus) {
		return false
	}
	dev, fn, ok := strings.Cut(rest, ".")
	return ok && len(dev) == 2 && isHex(dev) && len(fn) == 1 && fn[0] >= '0' && fn[0] <= '7'
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
