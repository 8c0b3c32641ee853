// Package topologytest writes synthetic sysfs trees for testing package
// topology. A Machine is a compact description of a node's hardware; Write
// turns it into the files and symlinks Linux would show under /sys, so that
// topology.Discover reads them exactly as it reads a live system.
//
// The named machines (Desktop1Socket, Server2Socket4NodesInterleaved, ...)
// are functions so that a test can take one and adjust it.
package topologytest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Machine describes a node. Zero counts mean 1 where a count is needed.
type Machine struct {
	Sockets        int
	DiesPerSocket  int
	NodesPerDie    int
	CoresPerNode   int
	ThreadsPerCore int
	// Interleaved numbers CPUs like a 2-socket Intel server: consecutive
	// ids alternate sockets (cpu0 on socket 0, cpu1 on socket 1, ...), and
	// a core's second thread is numCores ids after the first. Without it
	// sockets get consecutive id blocks (second threads still come last).
	Interleaved bool
	// ThreadsAdjacent numbers a core's threads consecutively (cpu0 and cpu1
	// are siblings), as QEMU does, instead of second threads last.
	ThreadsAdjacent bool
	// MemPerNodeGiB is each CPU node's MemTotal.
	MemPerNodeGiB int
	// HugePages2M is each CPU node's nr_hugepages of 2 MiB pages (a 1 GiB
	// size is listed too, with no pages).
	HugePages2M  int
	CPULessNodes []CPULessNode
	// Isolated is the isolated CPU list as the kernel prints it.
	Isolated string
	// Hybrid replaces Sockets...ThreadsPerCore with a one-socket, one-node
	// hybrid part.
	Hybrid *Hybrid
	// L3PerNode splits each node's cores into that many L3 groups (AMD
	// CCX-style); 0 means one L3 per node.
	L3PerNode int
	// Freq, if set, adds cpufreq files to every CPU.
	Freq *Freq
	// EPP writes cpufreq/energy_performance_preference for the CPUs each
	// entry lists (the first entry naming a CPU wins); a CPU no entry
	// names has no such file, as under a cpufreq driver without EPP.
	EPP []EPP
	// CoreKinds, if set, lists a regular layout's CPUs by core kind in
	// devices/cpu_core/cpus and devices/cpu_atom/cpus, as a hybrid part's
	// PMU does (nri-plugins' e2e suite fakes the same with its
	// OVERRIDE_SYS_CORE_CPUS and OVERRIDE_SYS_ATOM_CPUS).
	CoreKinds *CoreKinds
	PCI       []PCIDev
	NICs      []NIC
	Sparse    *Sparse
	// VirtualClassDevices are class entries ("CLASS/NAME") whose devices
	// sit below devices/virtual/, under no PCI function.
	VirtualClassDevices []string
}

// Hybrid is an Intel hybrid part: P cores with two threads, E cores with one,
// E cores sharing an L2 per cluster.
type Hybrid struct {
	PCores, ECores   int
	ECoresPerCluster int // 0 means 4
}

// CPULessNode is a NUMA node with memory and no CPUs.
type CPULessNode struct {
	// Kind is PMEM, HBM or CXL; it decides which devices and memory tier
	// Write adds as evidence.
	Kind abi.MemoryKind
	// Socket is the socket whose nodes are nearest.
	Socket  int
	SizeGiB int
	// Distance to the socket's nodes; 0 picks 17 (PMEM), 13 (HBM) or 24
	// (CXL). Other sockets' nodes are 11 further.
	Distance int
	// NoEvidence writes no dax, nd or cxl device and puts the node in the
	// DRAM memory tier, leaving only distances to tell its kind.
	NoEvidence bool
}

// CoreKinds is the CPU lists (the kernel's list format) of performance and
// efficient cores.
type CoreKinds struct{ PCores, ECores string }

// EPP is the energy-performance preference of some CPUs, as the kernel
// prints it: "performance", "balance_performance", "balance_power",
// "power", "default" or a number.
type EPP struct {
	CPUs  []int
	Value string
}

// Freq is cpufreq's cpuinfo_min_freq, cpuinfo_max_freq and base_frequency.
type Freq struct{ MinKHz, MaxKHz, BaseKHz int }

// PCIDev is a PCI function.
type PCIDev struct {
	Address string // "0000:3b:00.0"
	// Root is the root port it sits below; "" for a function directly below
	// the host bridge. A root not in Machine.PCI is added as a bridge.
	Root                  string
	Vendor, Device, Class string
	Node                  int // -1: no affinity
	Driver                string
	// ClassDevices are the function's entries under class/.
	ClassDevices []ClassDev
}

// ClassDev is a class/ entry of a PCI function.
type ClassDev struct {
	Entry string // "CLASS/NAME": "drm/card0"
	// Dir is the device's directory below the function's; "" means Entry
	// (drm/card0 lives at .../ADDR/drm/card0, a block device deeper:
	// nvme/nvme0/nvme0n1).
	Dir string
}

// NIC is a network interface.
type NIC struct {
	Name string
	PCI  string // the PCI function's address; "" for a virtual interface
	// Virtio puts the interface below a virtioN device below the function,
	// as virtio-net does.
	Virtio bool
	MAC    string
	MTU    int
	Up     bool
}

// Sparse leaves gaps in CPU numbering and takes CPUs offline.
type Sparse struct {
	// Gap ids are skipped after each socket's block of first (and second)
	// threads.
	Gap int
	// OfflineLast takes the highest-numbered CPUs offline.
	OfflineLast int
	// Online, when set, lists the only CPU ids that are online (a VM with
	// CPUs hot-plugged here and there); every other CPU is offline.
	Online []int
}

// Write writes m's sysfs tree under dir, which must exist or be creatable.
func (m Machine) Write(dir string) error {
	return m.walk(&writer{root: dir, dirs: map[string]bool{}})
}

// Digest is a digest of the tree Write writes: every directory, file (with
// its content) and symlink (with its target), in the order written. It
// does no I/O.
func (m Machine) Digest() (string, error) {
	h := sha256.New()
	if err := m.walk(&writer{digest: h, dirs: map[string]bool{}}); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// WriteCached writes m's tree once into cache, under its Digest, and
// returns that directory: a later call for the same tree (this machine, or
// one that writes the same files) finds it complete and writes nothing.
// A tree is built in a temporary sibling and renamed into place, so a
// reader never sees half of one. The largest fixture writes some 200,000
// files, which take minutes on a busy disk and the same again to remove.
func (m Machine) WriteCached(cache string) (string, error) {
	digest, err := m.Digest()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, digest)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("topology cache %s: %w", cache, err)
	}
	tmp, err := os.MkdirTemp(cache, ".building-")
	if err != nil {
		return "", fmt.Errorf("topology cache %s: %w", cache, err)
	}
	if err := m.Write(tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr == nil {
			return dir, nil // another test binary finished the same tree first
		}
		return "", fmt.Errorf("topology cache %s: %w", dir, err)
	}
	return dir, nil
}

// walk writes m's tree through w.
func (m Machine) walk(w *writer) error {
	cpus := m.layout()
	m.writeCPUs(w, cpus)
	m.writeNodes(w, cpus)
	m.writeMemoryEvidence(w)
	m.writePCI(w, cpus)
	m.writeNICs(w)
	m.writeClassDevices(w)
	return w.err
}

// writer creates files and symlinks under root, keeping the first error;
// with digest set it hashes what it would create instead, without I/O.
type writer struct {
	root   string
	digest hash.Hash
	dirs   map[string]bool
	err    error
}

// record hashes one operation in digest mode and tells whether the
// operation is to be done on disk.
func (w *writer) record(op, rel, arg string) bool {
	if w.digest == nil {
		return true
	}
	fmt.Fprintf(w.digest, "%s %q %q\n", op, rel, arg)
	return false
}

func (w *writer) mkdir(rel string) {
	if w.err != nil || w.dirs[rel] {
		return
	}
	w.dirs[rel] = true
	if w.record("d", rel, "") {
		w.err = os.MkdirAll(filepath.Join(w.root, rel), 0o755)
	}
}

// file writes content plus a newline, as sysfs attributes end.
func (w *writer) file(rel, content string) {
	w.mkdir(filepath.Dir(rel))
	if w.err == nil && w.record("f", rel, content) {
		w.err = os.WriteFile(filepath.Join(w.root, rel), []byte(content+"\n"), 0o644)
	}
}

func (w *writer) filef(rel, format string, args ...any) {
	w.file(rel, fmt.Sprintf(format, args...))
}

// link makes rel a relative symlink to target (both relative to root), as
// sysfs links are, and creates target as a directory if it does not exist.
func (w *writer) link(rel, target string) {
	if w.dirs["link:"+rel] {
		return // already made
	}
	w.dirs["link:"+rel] = true
	w.mkdir(filepath.Dir(rel))
	w.mkdir(target)
	if w.err != nil {
		return
	}
	to, err := filepath.Rel(filepath.Dir(rel), target)
	if err != nil {
		w.err = err
		return
	}
	if w.record("l", rel, to) {
		w.err = os.Symlink(to, filepath.Join(w.root, rel))
	}
}

func or1(n int) int {
	if n <= 0 {
		return 1
	}
	return n
}
