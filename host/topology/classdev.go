package topology

import (
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const sysClass = "class"

// MaxClassEntries bounds how many /sys/class entries Discover resolves
// looking for PCI functions' class devices (a real server has a few
// hundred). Past it Discover stops looking, logs a warning and sends the
// class devices it found so far.
const MaxClassEntries = 4096

// addClassDevices records on each PCI function the entries of class/*
// (class/net excepted: NetworkInterface lists those) whose links resolve
// below the function's directory under devices/, as "CLASS/NAME". An entry
// below several functions (a GPU below its root port) goes to the
// innermost one; an entry below none (a virtual device, a platform device)
// is left out. Lists come out sorted.
func (s *sysfs) addClassDevices(pci []*abi.PCIDevice, log *slog.Logger) error {
	if len(pci) == 0 {
		return nil
	}
	byDir := make(map[string]*abi.PCIDevice, len(pci))
	for _, d := range pci {
		dir, ok, err := s.resolve(pciDevices + "/" + d.Address)
		if err != nil {
			return err
		}
		if ok {
			byDir[dir] = d
		}
	}
	classes, err := s.subdirs(sysClass)
	if err != nil {
		return err
	}
	seen := 0
	for _, class := range classes {
		if class == "net" {
			continue
		}
		names, err := s.subdirs(sysClass + "/" + class)
		if err != nil {
			return err
		}
		for _, name := range names {
			if seen == MaxClassEntries {
				log.Warn("topology: too many class devices; the rest are not matched to PCI functions",
					"limit", MaxClassEntries, "first_skipped", sysClass+"/"+class+"/"+name)
				sortClassDevices(pci)
				return nil
			}
			seen++
			if d := owner(byDir, s.classTarget(class, name)); d != nil {
				d.ClassDevices = append(d.ClassDevices, class+"/"+name)
			}
		}
	}
	sortClassDevices(pci)
	return nil
}

// classTarget is where class entry class/name links to, relative to the
// root ("devices/pci0000:00/0000:00:02.0/drm/card0"), "" when it is no
// link. The link is read, not followed: a class link names the device's
// real directory, so joining it to the class directory resolves it, with
// one system call where following it costs one per path component.
func (s *sysfs) classTarget(class, name string) string {
	target, err := os.Readlink(s.path(sysClass + "/" + class + "/" + name))
	if err != nil || path.IsAbs(target) {
		return ""
	}
	return path.Join(sysClass, class, filepath.ToSlash(target))
}

// owner is the PCI function whose directory is the longest one that holds
// resolved (or is it), nil if none is.
func owner(byDir map[string]*abi.PCIDevice, resolved string) *abi.PCIDevice {
	for p := resolved; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if d := byDir[p]; d != nil {
			return d
		}
	}
	return nil
}

func sortClassDevices(pci []*abi.PCIDevice) {
	for _, d := range pci {
		slices.Sort(d.ClassDevices)
	}
}
