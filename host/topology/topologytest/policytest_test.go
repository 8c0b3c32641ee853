package topologytest_test

import (
	"bytes"
	"compress/gzip"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

var update = flag.Bool("update", false, "rewrite sdk/go/policytest/machines from the fixtures")

// fixtures are the machines policy authors get from policytest, by name.
var fixtures = map[string]func() topologytest.Machine{
	"Desktop1Socket":                 topologytest.Desktop1Socket,
	"HybridLaptop":                   topologytest.HybridLaptop,
	"N4C16":                          topologytest.N4C16,
	"N4C16EPP":                       topologytest.N4C16EPP,
	"PMEM112CPUIsolated":             topologytest.PMEM112CPUIsolated,
	"Server2Socket4NodesInterleaved": topologytest.Server2Socket4NodesInterleaved,
	"Server4Socket144CPU":            topologytest.Server4Socket144CPU,
	"Sparse4096CPU8Socket":           topologytest.Sparse4096CPU8Socket,
	"TwoCPU":                         topologytest.TwoCPU,
	"TwoL3":                          topologytest.TwoL3,
	"HBMAndPMEM":                     topologytest.HBMAndPMEM,
	"S8C4K":                          topologytest.S8C4K,
	"N6HBMCXL":                       topologytest.N6HBMCXL,
}

// TestPolicytestIsolate: policytest.Isolate shows a machine as discovery
// does when it boots with isolcpus.
func TestPolicytestIsolate(t *testing.T) {
	m := topologytest.N4C16()
	m.Isolated = "0-1"
	dir := t.TempDir()
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	want, err := topology.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := policytest.Isolate(policytest.Machine(t, "N4C16"), cpuset.New(0, 1)); !proto.Equal(got, want) {
		t.Errorf("Isolate(N4C16, 0-1) differs from N4C16 discovered with isolcpus=0-1")
	}
}

// TestPolicytestMachines: the topologies sdk/go/policytest embeds are what
// the host discovers from each fixture's sysfs tree, and there is one for
// every fixture. With -update it rewrites them.
func TestPolicytestMachines(t *testing.T) {
	cache := treeCache(t)
	var names []string
	for name, m := range fixtures {
		names = append(names, name)
		dir, err := m().WriteCached(cache)
		if err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
		want, err := topology.Discover(dir)
		if err != nil {
			t.Fatalf("discover %s: %v", name, err)
		}
		if *update {
			writeMachine(t, name, want)
			continue
		}
		got, err := policytest.LoadMachine(name)
		if err != nil {
			t.Errorf("%v (run go test ./host/topology/topologytest -update)", err)
			continue
		}
		if !proto.Equal(got, want) {
			t.Errorf("policytest's %s differs from its discovery: run go test ./host/topology/topologytest -run TestPolicytestMachines -update", name)
		}
	}
	slices.Sort(names)
	if got := policytest.MachineNames(); !*update && !slices.Equal(got, names) {
		t.Errorf("policytest has machines %v, the fixtures are %v", got, names)
	}
}

func writeMachine(t *testing.T, name string, topo proto.Message) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(topo)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "..", "sdk", "go", "policytest", policytest.MachineFile(name))
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// treeCache is where the fixture trees are kept between runs
// (Machine.WriteCached): the user's cache directory, or the test's own
// temporary one where there is none.
func treeCache(t *testing.T) string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "nriwasm", "topologytest")
	}
	return t.TempDir()
}

// TestWriteCached: the digest tells trees apart and does no I/O; a cached
// tree discovers as a freshly written one does, and a second call reuses it
// (a file removed from the cached tree stays removed).
func TestWriteCached(t *testing.T) {
	desktop, _ := topologytest.Desktop1Socket().Digest()
	again, _ := topologytest.Desktop1Socket().Digest()
	isolated := topologytest.Desktop1Socket()
	isolated.Isolated = "1"
	other, _ := isolated.Digest()
	if desktop == "" || desktop != again || desktop == other {
		t.Fatalf("digests %q, %q (again), %q (isolated)", desktop, again, other)
	}
	cache := t.TempDir()
	dir, err := topologytest.Desktop1Socket().WriteCached(cache)
	if err != nil || filepath.Base(dir) != desktop {
		t.Fatalf("WriteCached = %q, %v; want a directory named %s", dir, err, desktop)
	}
	fresh := t.TempDir()
	if err := topologytest.Desktop1Socket().Write(fresh); err != nil {
		t.Fatal(err)
	}
	got, err := topology.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := topology.Discover(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Error("the cached tree discovers otherwise than a fresh one")
	}
	marker := filepath.Join(dir, "devices", "system", "cpu", "online")
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	if again, err := topologytest.Desktop1Socket().WriteCached(cache); err != nil || again != dir {
		t.Fatalf("second WriteCached = %q, %v; want %q", again, err, dir)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the second WriteCached wrote the tree again (%v)", err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 1 {
		t.Errorf("cache holds %d entries, want the one tree", len(entries))
	}
}
