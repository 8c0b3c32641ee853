package policytest

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// The fixture machines, as the host discovers them from the sysfs trees
// host/topology/topologytest writes: each machines/NAME.binpb.gz is a
// gzipped abi.Topology. host/topology/topologytest's TestPolicytestMachines
// fails when one differs from a fresh discovery and rewrites them with
// -update.
//
//go:embed machines/*.binpb.gz
var machineFiles embed.FS

// MachineFile is the path, relative to this package, of machine name's file.
func MachineFile(name string) string { return "machines/" + name + ".binpb.gz" }

// MachineNames are the fixture machines, sorted: Desktop1Socket,
// HybridLaptop, N4C16 (nri-plugins' e2e VM), N4C16EPP (the same with
// energy-performance preferences that differ), PMEM112CPUIsolated,
// Server2Socket4NodesInterleaved, Server4Socket144CPU and
// Sparse4096CPU8Socket (for benchmarks).
func MachineNames() []string {
	entries, _ := machineFiles.ReadDir("machines")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".binpb.gz"))
	}
	slices.Sort(names)
	return names
}

// VariedMachines are four fixture machines that between them have one and
// several sockets, one and several NUMA nodes per socket, interleaved CPU
// numbering, 144 CPUs, PMEM nodes and isolated CPUs: the machines a
// policy's scenario tests run on (the 4,096-CPU one is for benchmarks).
var VariedMachines = []string{"Desktop1Socket", "Server2Socket4NodesInterleaved", "Server4Socket144CPU", "PMEM112CPUIsolated"}

var (
	machineMu    sync.Mutex
	machineCache = map[string]*abi.Topology{}
)

// LoadMachine reads fixture machine name's topology.
func LoadMachine(name string) (*abi.Topology, error) {
	f, err := machineFiles.Open(MachineFile(name))
	if err != nil {
		return nil, fmt.Errorf("fixture machine %q (have %s): %w", name, strings.Join(MachineNames(), ", "), err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("fixture machine %q: %w", name, err)
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, zr); err != nil {
		return nil, fmt.Errorf("fixture machine %q: %w", name, err)
	}
	t := &abi.Topology{}
	if err := t.UnmarshalVT(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("fixture machine %q: %w", name, err)
	}
	return t, nil
}

// Machine is fixture machine name's topology, read once per test binary
// and shared: do not modify it. An unknown name fails tb.
func Machine(tb testing.TB, name string) *abi.Topology {
	tb.Helper()
	machineMu.Lock()
	defer machineMu.Unlock()
	if t := machineCache[name]; t != nil {
		return t
	}
	t, err := LoadMachine(name)
	if err != nil {
		tb.Fatal(err)
	}
	machineCache[name] = t
	return t
}

// Isolate is a copy of topo with cpus kernel-isolated, as booting the
// machine with isolcpus=cpus shows it to the host.
func Isolate(topo *abi.Topology, cpus cpuset.Set) *abi.Topology {
	t := topo.CloneVT()
	for _, c := range t.Cpus {
		c.Isolated = cpus.Contains(c.Id)
	}
	return t
}
