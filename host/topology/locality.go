package topology

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Locator finds where the storage and devices a container uses live: the
// host's half of topology hints (the policy decides which hints count). Create
// it with NewLocator.
type Locator struct {
	sys *sysfs
}

// NewLocator returns a Locator reading the sysfs mounted at sysfsRoot ("/sys"
// on a node, a captured tree in tests).
func NewLocator(sysfsRoot string) (*Locator, error) {
	realRoot, err := filepath.EvalSymlinks(sysfsRoot)
	if err != nil {
		return nil, fmt.Errorf("topology: locator: resolve sysfs root %s: %w", sysfsRoot, err)
	}
	return &Locator{sys: &sysfs{root: filepath.Clean(sysfsRoot), realRoot: realRoot}}, nil
}

// localityFiles are the files that give a sysfs device's locality, and which
// field of a hint each fills (nri-plugins: pkg/topology getTopologyHint).
var localityFiles = []struct {
	name string
	cpus bool // else NUMA nodes
}{
	{"local_cpulist", true},
	{"cpulistaffinity", true},
	{"cpulist", true},
	{"shared_cpu_list", true},
	{"numa_node", false},
}

// MountHints returns the hints of the block device behind a mount's source:
// the source itself when it is a device node, else the device holding its
// file system. A source that does not exist, lives on a virtual file system
// (tmpfs, overlay) or has no locality in sysfs has none.
func (l *Locator) MountHints(source string) ([]*abi.TopologyHint, error) {
	typ, major, minor, ok, err := deviceOf(source)
	if err != nil || !ok {
		return nil, err
	}
	return l.DeviceHints(typ, major, minor)
}

// DeviceHints returns the hints of a device node: typ is "b" or "c" (as the
// OCI spec names them; anything else has none). The device's sysfs entry is
// /sys/dev/{block,char}/MAJOR:MINOR; the walk goes up from it to the first
// directory with a locality file, then adds the hints of the devices it is
// built from (a RAID's slaves).
func (l *Locator) DeviceHints(typ string, major, minor int64) ([]*abi.TopologyHint, error) {
	var class string
	switch typ {
	case "b":
		class = "block"
	case "c", "u":
		class = "char"
	default:
		return nil, nil
	}
	if major <= 0 || minor < 0 {
		return nil, nil
	}
	dev, ok, err := l.sys.resolve(fmt.Sprintf("dev/%s/%d:%d", class, major, minor))
	if err != nil || !ok {
		return nil, err
	}
	return l.hints(dev, nil, 0)
}

// maxSlaveDepth bounds the recursion into slaves/ (a loop in a captured tree
// must not hang the agent); real stacks (dm on md on disks) are 2-3 deep.
const maxSlaveDepth = 8

// hints walks up from dev (relative to the root, "devices/...") and into its
// slaves, appending to out the hints not already in it.
func (l *Locator) hints(dev string, out []*abi.TopologyHint, depth int) ([]*abi.TopologyHint, error) {
	for p := dev; strings.HasPrefix(p, "devices/"); p = path.Dir(p) {
		h, err := l.hintAt(p)
		if err != nil {
			return nil, err
		}
		if h != nil {
			if !hasProvider(out, h.Provider) {
				out = append(out, h)
			}
			break
		}
	}
	if depth >= maxSlaveDepth {
		return out, nil
	}
	slaves, err := l.sys.dirNames(dev+"/slaves", "")
	if err != nil {
		return nil, err
	}
	for _, s := range slaves {
		sd, ok, err := l.sys.resolve(dev + "/slaves/" + s)
		if err != nil {
			return nil, err
		}
		if ok {
			if out, err = l.hints(sd, out, depth+1); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// hintAt reads the locality files of one sysfs directory; nil when it has
// none (a numa_node of -1 is none).
func (l *Locator) hintAt(dir string) (*abi.TopologyHint, error) {
	h := &abi.TopologyHint{Provider: "/sys/" + dir}
	for _, f := range localityFiles {
		c, ok, err := l.sys.read(dir + "/" + f.name)
		if err != nil {
			return nil, err
		}
		if !ok || c == "" || c == "-1" {
			continue
		}
		ids, err := ParseList(c)
		if err != nil {
			return nil, l.sys.badContent(dir+"/"+f.name, c, err)
		}
		switch {
		case f.cpus && h.Cpus == "":
			h.Cpus = FormatList(ids)
		case !f.cpus && h.Numas == "":
			h.Numas = FormatList(ids)
		}
	}
	if h.Cpus == "" && h.Numas == "" {
		return nil, nil
	}
	return h, nil
}

func hasProvider(hs []*abi.TopologyHint, provider string) bool {
	for _, h := range hs {
		if h.GetProvider() == provider {
			return true
		}
	}
	return false
}
