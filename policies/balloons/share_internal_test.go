package balloons

import (
	"fmt"
	"reflect"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestReshareMatchesARescan checks the incremental idle sharing (zones
// indexed by group, unchanged zones adjusted from the CPUs that moved)
// against a rescan from scratch after every call of a long, mixed sequence
// of creates and removes on every sharing level.
func TestReshareMatchesARescan(t *testing.T) {
	const config = `
reservedResources: {cpu: 1}
balloonTypes:
- {name: numa, namespaces: [numa], maxCPUs: 4, shareIdleCPUsInSame: numa}
- {name: core, namespaces: [core], maxCPUs: 3, shareIdleCPUsInSame: core}
- {name: pkg, namespaces: [pkg], maxCPUs: 6, shareIdleCPUsInSame: package, preferNewBalloons: true}
- {name: all, namespaces: [all], maxCPUs: 2, shareIdleCPUsInSame: system}
`
	p := New()
	if _, err := p.Init(&abi.InitRequest{Config: []byte(config), Topology: policytest.Machine(t, "Server2Socket4NodesInterleaved")}); err != nil {
		t.Fatal(err)
	}
	namespaces := []string{"numa", "core", "pkg", "all", "default"}
	live := map[int]bool{}
	x := uint32(7)
	for step := range 600 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		n := int(x % 40)
		id := fmt.Sprintf("c%02d", n)
		pod := &abi.PodSandbox{Id: "pod-" + id, Namespace: namespaces[n%len(namespaces)]}
		ctr := &abi.Container{Id: id, PodSandboxId: pod.Id, Name: "ctr", Resources: &abi.Resources{CpuRequestMilli: int64(100 + 300*(x>>8%5))}}
		if live[n] {
			if _, err := p.RemoveContainer(&abi.RemoveContainerRequest{Pod: pod, Container: ctr}); err != nil {
				t.Fatalf("step %d: remove %s: %v", step, id, err)
			}
			delete(live, n)
		} else if _, err := p.CreateContainer(&abi.CreateContainerRequest{Pod: pod, Container: ctr}); err == nil {
			live[n] = true
		}
		s := p.st
		for _, b := range s.balloons {
			lvl := b.t.ShareIdleCPUsInSame
			if lvl == "" {
				continue
			}
			zone := s.available
			if lvl != LevelSystem {
				zone, _ = s.ix.within(lvl, b.cpus)
			}
			if want := s.idleIn(zone); !b.shared.Equal(want) {
				t.Fatalf("step %d: balloon %s (CPUs %s, %s) shares %s, a rescan finds %s", step, b.name(), b.cpus, lvl, b.shared, want)
			}
		}
	}
}

// TestZoneSharesOneSet: after a reshare, balloons of one zone that share
// the same idle CPUs hold one set in memory, not a copy each: packed into
// one node, and balanced over the nodes (each node's balloons listed
// between the others', a default container taking CPUs of several nodes).
func TestZoneSharesOneSet(t *testing.T) {
	for _, tc := range []struct {
		name, balance string
		n             int
	}{{"packed", "false", 4}, {"balanced", "true", 12}} {
		t.Run(tc.name, func(t *testing.T) {
			config := "reservedResources: {cpu: 1}\nballoonTypes:\n- {name: numa, namespaces: [numa], maxCPUs: 1, shareIdleCPUsInSame: numa, allocatorTopologyBalancing: " + tc.balance + "}\n"
			p := New()
			if _, err := p.Init(&abi.InitRequest{Config: []byte(config), Topology: policytest.Machine(t, "Server2Socket4NodesInterleaved")}); err != nil {
				t.Fatal(err)
			}
			for i := range tc.n {
				pod := &abi.PodSandbox{Id: fmt.Sprint("pod", i), Namespace: "numa"}
				ctr := &abi.Container{Id: fmt.Sprint("c", i), PodSandboxId: pod.Id, Name: "ctr", Resources: &abi.Resources{CpuRequestMilli: 1000}}
				if _, err := p.CreateContainer(&abi.CreateContainerRequest{Pod: pod, Container: ctr}); err != nil {
					t.Fatal(err)
				}
			}
			pod := &abi.PodSandbox{Id: "big", Namespace: "default"}
			ctr := &abi.Container{Id: "big", PodSandboxId: pod.Id, Name: "ctr", Resources: &abi.Resources{CpuRequestMilli: 40000}}
			if _, err := p.CreateContainer(&abi.CreateContainerRequest{Pod: pod, Container: ctr}); err != nil {
				t.Fatal(err)
			}
			checkOneSetPerZone(t, p.st.byName["numa"].own)
		})
	}
}

// checkOneSetPerZone fails t where two of own share equal idle CPUs of one
// zone in two sets, or where no two share any.
func checkOneSetPerZone(t *testing.T, own []*balloon) {
	t.Helper()
	pairs := 0
	for i, a := range own {
		for _, b := range own[i+1:] {
			if !a.zone.Equal(b.zone) || !a.shared.Equal(b.shared) || a.shared.IsEmpty() {
				continue
			}
			pairs++
			if reflect.ValueOf(a.shared).Field(0).Pointer() != reflect.ValueOf(b.shared).Field(0).Pointer() {
				t.Errorf("balloons %s and %s share %s, each in a set of its own", a.name(), b.name(), a.shared)
			}
		}
	}
	if pairs == 0 {
		t.Fatalf("no two balloons share one zone's idle CPUs: %v", own)
	}
}

// TestResizeScratch: a deflate's candidates and a reshare's changed groups
// live in scratch lists the index and the state keep, so neither allocates
// for them: a deflate allocates only the set it answers.
func TestResizeScratch(t *testing.T) {
	p := New()
	if _, err := p.Init(&abi.InitRequest{Config: []byte("reservedResources: {cpu: 1}\n"), Topology: policytest.Machine(t, "Server2Socket4NodesInterleaved")}); err != nil {
		t.Fatal(err)
	}
	pod := &abi.PodSandbox{Id: "pod", Namespace: "default"}
	ctr := &abi.Container{Id: "a", PodSandboxId: pod.Id, Name: "ctr", Resources: &abi.Resources{CpuRequestMilli: 6000}}
	if _, err := p.CreateContainer(&abi.CreateContainerRequest{Pod: pod, Container: ctr}); err != nil {
		t.Fatal(err)
	}
	s := p.st
	b := s.deflt.own[0]
	var rm []uint32
	if n := testing.AllocsPerRun(20, func() { rm = s.ix.deflate(b.cpus, 2, &b.t.opts, s.treeFree).Sorted() }); n != 2 {
		t.Errorf("a deflate allocates %v times, want 2 (its answer, and Sorted here)", n)
	}
	if len(rm) != 2 {
		t.Fatalf("deflate by 2 gave back %v", rm)
	}
	ids := b.cpus.Sorted()
	if n := testing.AllocsPerRun(20, func() { s.groupsOf(LevelNUMA, ids) }); n != 0 {
		t.Errorf("groupsOf allocates %v times, want none", n)
	}
	if got, want := s.groupsOf(LevelNUMA, ids), s.groupsOf(LevelNUMA, ids[:1]); len(got) == 0 || got[0] != want[0] {
		t.Errorf("groupsOf = %v, first group %v", got, want)
	}
}
