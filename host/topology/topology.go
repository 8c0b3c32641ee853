// Package topology discovers a Linux node's hardware topology from sysfs and
// returns it as the ABI message abi.v1.Topology that policies receive.
//
// Discover reads, relative to a sysfs root ("/sys" by default, any directory
// holding a sysfs-shaped tree in tests):
//
//   - CPUs: devices/system/cpu/{online,offline,isolated}, each online CPU's
//     topology/, cache/indexK/ and cpufreq/ files, its nodeM link, and the
//     hybrid PMU lists devices/cpu_core/cpus and devices/cpu_atom/cpus;
//   - NUMA nodes: devices/system/node/ (online list, cpulist, meminfo,
//     distance, hugepages) plus the memory-kind evidence in
//     devices/virtual/memory_tiering, bus/dax, bus/nd and bus/cxl;
//   - PCI functions: bus/pci/devices/*, following the links into devices/;
//   - network interfaces: class/net/*.
//
// Files a machine may lack (VMs often have no dies, clusters, caches, cpufreq
// or NUMA directory) leave the matching fields at their zero value; a file
// that exists but does not parse fails Discover with an error naming the path
// and the content. All lists in the result are sorted, so two calls on an
// unchanged tree give equal messages.
//
// sysfs does not hold IP addresses. Discover fills them from the live network
// namespace only when the root is "/sys"; for any other root addresses stay
// empty unless WithAddressLookup supplies them.
//
// RATIONALE.md records why the package decides as it does where sysfs leaves
// room (memory kinds, cache ids, sentinel ids).
package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// DefaultRoot is where Linux mounts sysfs.
const DefaultRoot = "/sys"

// AddressLookup returns an interface's addresses in CIDR form
// ("10.0.0.5/24"). Discover canonicalizes and sorts what it returns.
type AddressLookup func(ifname string) ([]string, error)

// Option adjusts Discover.
type Option func(*config)

type config struct {
	addrs AddressLookup
}

// WithAddressLookup makes Discover fill NetworkInterface.addresses from
// lookup, whatever the root. Without it, addresses come from the live
// namespace when the root is "/sys" and stay empty otherwise.
func WithAddressLookup(lookup AddressLookup) Option {
	return func(c *config) { c.addrs = lookup }
}

// Discover reads the topology under sysfsRoot ("" means DefaultRoot).
func Discover(sysfsRoot string, opts ...Option) (*abi.Topology, error) {
	if sysfsRoot == "" {
		sysfsRoot = DefaultRoot
	}
	sysfsRoot = filepath.Clean(sysfsRoot)
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.addrs == nil && sysfsRoot == DefaultRoot {
		cfg.addrs = liveAddresses
	}
	realRoot, err := filepath.EvalSymlinks(sysfsRoot)
	if err != nil {
		return nil, fmt.Errorf("topology: sysfs root: %w", err)
	}
	s := &sysfs{root: sysfsRoot, realRoot: realRoot}

	t := &abi.Topology{}
	cpus, err := s.discoverCPUs()
	if err != nil {
		return nil, err
	}
	t.Cpus, t.OfflineCpus = cpus.list, cpus.offline
	if t.Caches, err = s.discoverCaches(cpus); err != nil {
		return nil, err
	}
	if t.NumaNodes, err = s.discoverNodes(cpus); err != nil {
		return nil, err
	}
	if t.PciDevices, err = s.discoverPCI(); err != nil {
		return nil, err
	}
	if t.NetworkInterfaces, err = s.discoverNetIfs(t.PciDevices, cfg.addrs); err != nil {
		return nil, err
	}
	return t, nil
}

// sysfs reads files under one root. Paths handed to its methods are
// slash-separated and relative to the root.
type sysfs struct {
	root     string // as given, cleaned
	realRoot string // root with symlinks resolved, for making link targets relative
}

func (s *sysfs) path(rel string) string { return filepath.Join(s.root, rel) }

// read returns the file's content without surrounding white space; ok is
// false when the file does not exist.
func (s *sysfs) read(rel string) (content string, ok bool, err error) {
	p := s.path(rel)
	b, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("topology: read %s: %w", p, err)
	}
	return strings.TrimSpace(string(b)), true, nil
}

// badContent is the error for a file that exists but does not parse.
func (s *sysfs) badContent(rel, content string, err error) error {
	return fmt.Errorf("topology: %s: bad content %q: %w", s.path(rel), content, err)
}

// readList reads a file in list format; a missing file is an empty list.
func (s *sysfs) readList(rel string) (ids []uint32, ok bool, err error) {
	c, ok, err := s.read(rel)
	if !ok || err != nil {
		return nil, ok, err
	}
	ids, err = ParseList(c)
	if err != nil {
		return nil, false, s.badContent(rel, c, err)
	}
	return ids, true, nil
}

// readUint reads a decimal unsigned number; a missing file reads as 0.
func (s *sysfs) readUint(rel string, bits int) (v uint64, ok bool, err error) {
	c, ok, err := s.read(rel)
	if !ok || err != nil {
		return 0, ok, err
	}
	v, err = strconv.ParseUint(c, 10, bits)
	if err != nil {
		return 0, false, s.badContent(rel, c, err)
	}
	return v, true, nil
}

// readID reads a topology id. The kernel prints -1 for "none" (die_id and
// cluster_id on some architectures, numa_node of a device without
// affinity); that, like a missing file, gives ok == false.
func (s *sysfs) readID(rel string) (id uint32, ok bool, err error) {
	c, ok, err := s.read(rel)
	if !ok || err != nil || c == "-1" {
		return 0, false, err
	}
	v, err := strconv.ParseUint(c, 10, 32)
	if err != nil {
		return 0, false, s.badContent(rel, c, err)
	}
	return uint32(v), true, nil
}

// resolve returns where a link under the root points, relative to the root
// and slash-separated ("devices/pci0000:00/0000:00:03.0"); ok is false when
// the path does not exist or leads outside the root.
func (s *sysfs) resolve(rel string) (string, bool, error) {
	p, err := filepath.EvalSymlinks(s.path(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("topology: resolve %s: %w", s.path(rel), err)
	}
	r, err := filepath.Rel(s.realRoot, p)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", false, nil
	}
	return filepath.ToSlash(r), true, nil
}

// dirNames lists a directory's entries with the given prefix, sorted; a
// missing directory has none.
func (s *sysfs) dirNames(rel, prefix string) ([]string, error) {
	p := s.path(rel)
	entries, err := os.ReadDir(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("topology: list %s: %w", p, err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// exists reports whether a path exists under the root.
func (s *sysfs) exists(rel string) bool {
	_, err := os.Stat(s.path(rel))
	return err == nil
}

// numberedNames returns the numbers N of the entries named prefix+N in a
// directory ("node0", "node1" → 0, 1), sorted.
func (s *sysfs) numberedNames(rel, prefix string) ([]uint32, error) {
	names, err := s.dirNames(rel, prefix)
	if err != nil {
		return nil, err
	}
	var ids []uint32
	for _, n := range names {
		if v, err := parseID(n[len(prefix):]); err == nil {
			ids = append(ids, v)
		}
	}
	return sortedUnique(ids), nil
}
