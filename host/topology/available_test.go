package topology_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
)

// TestPodsCgroupCPUs reads the pods' cgroup cpuset where kubelet puts it on
// cgroup v1 and v2, and names the paths it tried when there is none.
func TestPodsCgroupCPUs(t *testing.T) {
	for _, rel := range []string{"cpuset/kubepods/cpuset.cpus", "kubepods.slice/cpuset.cpus.effective"} {
		root := t.TempDir()
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("2-5,7\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := topology.PodsCgroupCPUs(root)
		if err != nil || got.String() != "2-5,7" {
			t.Errorf("%s: %v, %v; want 2-5,7", rel, got, err)
		}
	}
	_, err := topology.PodsCgroupCPUs(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "cpuset/kubepods/cpuset.cpus") {
		t.Errorf("no pods' cgroup: %v, want an error naming the paths tried", err)
	}
}

// TestRestrict keeps only the available CPUs, in the CPU list, thread
// siblings and caches, and refuses CPUs that are not online.
func TestRestrict(t *testing.T) {
	topo := func() *abi.Topology {
		return &abi.Topology{
			Cpus: []*abi.CPU{
				{Id: 0, ThreadSiblings: []uint32{0, 2}, CacheIds: []uint32{0}}, {Id: 1, ThreadSiblings: []uint32{1, 3}, CacheIds: []uint32{1}},
				{Id: 2, ThreadSiblings: []uint32{0, 2}, CacheIds: []uint32{0}}, {Id: 3, ThreadSiblings: []uint32{1, 3}, CacheIds: []uint32{1}},
			},
			Caches: []*abi.Cache{{Id: 0, Cpus: []uint32{0, 2}}, {Id: 1, Cpus: []uint32{1, 3}}},
		}
	}
	tp := topo()
	if err := topology.Restrict(tp, cpuset.MustParse("0-2")); err != nil {
		t.Fatal(err)
	}
	var ids []uint32
	for _, c := range tp.Cpus {
		ids = append(ids, c.Id)
	}
	if !slices.Equal(ids, []uint32{0, 1, 2}) || !slices.Equal(tp.Cpus[1].ThreadSiblings, []uint32{1}) || !slices.Equal(tp.Caches[1].Cpus, []uint32{1}) {
		t.Errorf("restricted to 0-2: cpus %v, CPU 1's siblings %v, cache 1 %v", ids, tp.Cpus[1].ThreadSiblings, tp.Caches[1].Cpus)
	}
	tp = topo()
	if err := topology.Restrict(tp, cpuset.MustParse("0,1")); err != nil || len(tp.Caches) != 2 {
		t.Errorf("restricted to 0,1: %v, caches %v", err, tp.Caches)
	}
	if err := topology.Restrict(topo(), cpuset.MustParse("3-5")); err == nil || !strings.Contains(err.Error(), "4-5 not online") {
		t.Errorf("restricted to 3-5: %v, want an error naming 4-5", err)
	}
}
