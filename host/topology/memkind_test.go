package topology_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// TestMemoryKinds covers each rule of the CPU-less node heuristic
// (RATIONALE.md). The machines have 2 CPU nodes; CPU-less nodes start at 2.
func TestMemoryKinds(t *testing.T) {
	const (
		dram = abi.MemoryKind_MEMORY_KIND_DRAM
		pmem = abi.MemoryKind_MEMORY_KIND_PMEM
		hbm  = abi.MemoryKind_MEMORY_KIND_HBM
		cxl  = abi.MemoryKind_MEMORY_KIND_CXL
		none = abi.MemoryKind_MEMORY_KIND_UNSPECIFIED
	)
	type node = topologytest.CPULessNode
	tests := []struct {
		name   string
		nodes  []node
		remove []string
		want   []abi.MemoryKind // for nodes 2, 3, ...
	}{
		{"PMEM: libnvdimm dax device and slow tier", []node{{Kind: pmem, SizeGiB: 8}}, nil, []abi.MemoryKind{pmem}},
		{"PMEM: libnvdimm device alone", []node{{Kind: pmem, SizeGiB: 8, Distance: 12}},
			[]string{"devices/virtual/memory_tiering"}, []abi.MemoryKind{pmem}},
		{"PMEM: slow tier alone", []node{{Kind: pmem, SizeGiB: 8, Distance: 12}},
			[]string{"bus/dax", "bus/nd"}, []abi.MemoryKind{pmem}},
		{"CXL: device wins over slow tier", []node{{Kind: cxl, SizeGiB: 8}}, nil, []abi.MemoryKind{cxl}},
		{"CXL region without a dax device: distance decides", []node{{Kind: cxl, SizeGiB: 8}},
			[]string{"bus/dax", "devices/virtual/memory_tiering"}, []abi.MemoryKind{pmem}},
		{"HBM: fast tier, hmem dax is no evidence", []node{{Kind: hbm, SizeGiB: 8, Distance: 20}}, nil, []abi.MemoryKind{hbm}},
		{"far, no evidence", []node{{Kind: pmem, SizeGiB: 8, Distance: 28, NoEvidence: true}}, nil, []abi.MemoryKind{pmem}},
		{"near, no evidence", []node{{Kind: hbm, SizeGiB: 8, NoEvidence: true}}, nil, []abi.MemoryKind{hbm}},
		{"in between, no evidence", []node{{Kind: pmem, SizeGiB: 8, Distance: 17, NoEvidence: true}}, nil, []abi.MemoryKind{none}},
		{"far, no tiers at all", []node{{Kind: pmem, SizeGiB: 8, Distance: 30, NoEvidence: true}},
			[]string{"devices/virtual/memory_tiering"}, []abi.MemoryKind{pmem}},
		{"no memory", []node{{Kind: pmem, SizeGiB: 0}}, nil, []abi.MemoryKind{none}},
		{"mixed", []node{{Kind: hbm, SizeGiB: 16}, {Kind: hbm, Socket: 1, SizeGiB: 16}, {Kind: cxl, SizeGiB: 64}, {Kind: pmem, Socket: 1, SizeGiB: 256}},
			nil, []abi.MemoryKind{hbm, hbm, cxl, pmem}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := topologytest.Machine{Sockets: 2, CoresPerNode: 2, MemPerNodeGiB: 4, CPULessNodes: tc.nodes}
			root := write(t, m)
			for _, r := range tc.remove {
				removeGlob(t, root, r)
			}
			topo := discover(t, root)
			var got []abi.MemoryKind
			for _, n := range topo.NumaNodes {
				if n.Id < 2 {
					if n.MemoryKind != dram {
						t.Errorf("CPU node %d: %v", n.Id, n.MemoryKind)
					}
					continue
				}
				got = append(got, n.MemoryKind)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("kinds %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAddressLookup(t *testing.T) {
	root := write(t, topologytest.Desktop1Socket())
	lookup := func(name string) ([]string, error) {
		if name != "eno1" {
			return nil, nil
		}
		return []string{"fd00::5/64", "10.0.0.5/24", "::ffff:10.0.0.6/120", "10.0.0.5/24", "fe80::1%eno1/64"}, nil
	}
	topo := discover(t, root, topology.WithAddressLookup(lookup))
	want := []string{"10.0.0.5/24", "10.0.0.6/24", "fd00::5/64", "fe80::1/64"}
	if got := netIf(t, topo, "eno1").Addresses; !slices.Equal(got, want) {
		t.Errorf("eno1 addresses %v, want %v", got, want)
	}
	if got := netIf(t, topo, "lo").Addresses; len(got) != 0 {
		t.Errorf("lo addresses %v", got)
	}

	for name, lookup := range map[string]topology.AddressLookup{
		"lookup error": func(string) ([]string, error) { return nil, errors.New("netlink down") },
		"bad address":  func(string) ([]string, error) { return []string{"10.0.0.300/24"}, nil },
	} {
		t.Run(name, func(t *testing.T) {
			_, err := topology.Discover(root, topology.WithAddressLookup(lookup))
			if err == nil || !strings.Contains(err.Error(), "addresses of docker0") {
				t.Errorf("error %v, want one naming docker0", err)
			}
		})
	}
	if _, err := topology.Discover(root, topology.WithAddressLookup(nil)); err == nil || !strings.Contains(err.Error(), "address lookup") {
		t.Errorf("a nil lookup: error %v, want one naming the address lookup", err)
	}
}
