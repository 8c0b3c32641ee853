// Package topology discovers a Linux node's hardware topology from sysfs and
// returns it as the ABI message abi.v1.Topology that policies receive.
//
// Discover reads, relative to a sysfs root ("/sys" by default, any directory
// holding a sysfs-shaped tree in tests):
//
//   - CPUs: devices/system/cpu/{online,offline,isolated}, each online CPU's
//     topology/, cache/indexK/ and cpufreq/ files (frequencies and, since
//     ABI v1.4, energy_performance_preference, passed on as the kernel
//     prints it), its nodeM link, and the hybrid PMU lists
//     devices/cpu_core/cpus and devices/cpu_atom/cpus;
//   - NUMA nodes: devices/system/node/ (online list, cpulist, meminfo,
//     distance, hugepages) plus the memory-kind evidence in
//     devices/virtual/memory_tiering, bus/dax, bus/nd and bus/cxl;
//   - PCI functions: bus/pci/devices/*, following the links into devices/,
//     and (since ABI v1.5) the class/* entries below each, class/net
//     excepted, up to MaxClassEntries of them;
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
	"log/slog"
	"path/filepath"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// DefaultRoot is where Linux mounts sysfs.
const DefaultRoot = "/sys"

// AddressLookup returns an interface's addresses in CIDR form
// ("10.0.0.5/24"). Discover canonicalizes and sorts what it returns.
type AddressLookup func(ifname string) ([]string, error)

// Option adjusts Discover; a bad value is Discover's error, naming the
// option (the host's one options style: host/RATIONALE.md).
type Option func(*options) error

type options struct {
	addrs AddressLookup
	log   *slog.Logger
}

// WithAddressLookup makes Discover fill NetworkInterface.addresses from
// lookup, whatever the root. Without it, addresses come from the live
// namespace when the root is "/sys" and stay empty otherwise.
func WithAddressLookup(lookup AddressLookup) Option {
	return func(o *options) error {
		if lookup == nil {
			return errors.New("topology: address lookup: nil function")
		}
		o.addrs = lookup
		return nil
	}
}

// WithLogger makes Discover log its warnings (MaxClassEntries reached) to
// log instead of slog.Default().
func WithLogger(log *slog.Logger) Option {
	return func(o *options) error {
		if log == nil {
			return errors.New("topology: logger: nil")
		}
		o.log = log
		return nil
	}
}

// Discover reads the topology under sysfsRoot ("" means DefaultRoot).
func Discover(sysfsRoot string, opts ...Option) (*abi.Topology, error) {
	if sysfsRoot == "" {
		sysfsRoot = DefaultRoot
	}
	sysfsRoot = filepath.Clean(sysfsRoot)
	cfg := options{log: slog.Default()}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
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
	if err := s.addClassDevices(t.PciDevices, cfg.log); err != nil {
		return nil, err
	}
	if t.NetworkInterfaces, err = s.discoverNetIfs(t.PciDevices, cfg.addrs); err != nil {
		return nil, err
	}
	return t, nil
}
