package balloons

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestCompositeBookkeeping drives composite balloons of composite balloons
// (balance-balloons and all, a composite reserved type) through a long,
// mixed sequence of creates (some too big: their rollback is checked too)
// and removes, and checks after every call that the free CPUs, their count
// and their per-group counts match the balloons' leaves, that a composite
// balloon's CPUs are its parts', and that each type lists exactly the
// instance numbers its balloons and parts use.
func TestCompositeBookkeeping(t *testing.T) {
	const config = `
reservedResources: {cpu: 1}
balloonTypes:
- {name: n0, preferCloseToDevices: [/sys/devices/system/node/node0]}
- {name: n1, preferCloseToDevices: [/sys/devices/system/node/node1]}
- {name: n2, preferCloseToDevices: [/sys/devices/system/node/node2], maxCPUs: 3}
- {name: n3, preferCloseToDevices: [/sys/devices/system/node/node3]}
- {name: pkg0, components: [{balloonType: n0}, {balloonType: n1}]}
- {name: pkg1, components: [{balloonType: n2}, {balloonType: n3}]}
- {name: all, namespaces: [all], components: [{balloonType: pkg0}, {balloonType: pkg1}], minCPUs: 4, minBalloons: 1}
- {name: either, namespaces: [either], components: [{balloonType: pkg0}, {balloonType: pkg1}], componentCreation: balance-balloons, preferNewBalloons: true, minCPUs: 2}
- {name: one, namespaces: [one], components: [{balloonType: n3}, {balloonType: n2}, {balloonType: n0}], componentCreation: balance-balloons, preferNewBalloons: true, minCPUs: 2}
- {name: core, preferCloseToDevices: [/sys/devices/system/cpu/cpu6/cache/index0]}
- {name: reserved, components: [{balloonType: core}]}
`
	p := New()
	if _, err := p.Init(&abi.InitRequest{Config: []byte(config), Topology: policytest.Machine(t, "N4C16")}); err != nil {
		t.Fatal(err)
	}
	namespaces := []string{"all", "either", "one", "kube-system", "default"}
	live := map[int]bool{}
	failed := 0
	x := uint32(11)
	for step := range 400 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		n := int(x % 24)
		id := fmt.Sprintf("c%02d", n)
		pod := &abi.PodSandbox{Id: "pod-" + id, Namespace: namespaces[n%len(namespaces)]}
		ctr := &abi.Container{Id: id, PodSandboxId: pod.Id, Name: "ctr", Resources: &abi.Resources{CpuRequestMilli: int64(200 + 900*(x>>8%5))}}
		if live[n] {
			if _, err := p.RemoveContainer(&abi.RemoveContainerRequest{Pod: pod, Container: ctr}); err != nil {
				t.Fatalf("step %d: remove %s: %v", step, id, err)
			}
			delete(live, n)
		} else if _, err := p.CreateContainer(&abi.CreateContainerRequest{Pod: pod, Container: ctr}); err == nil {
			live[n] = true
		} else {
			failed++
		}
		checkBookkeeping(t, step, p.st)
	}
	if failed == 0 || len(live) == 0 {
		t.Errorf("%d creates failed, %d containers live at the end: the sequence misses a path", failed, len(live))
	}
}

func checkBookkeeping(t *testing.T, step int, s *state) {
	t.Helper()
	var held cpuset.Set
	insts := map[*btype][]int{}
	for _, b := range s.balloons {
		b.walk(func(x *balloon) {
			insts[x.t] = append(insts[x.t], x.inst)
			if len(x.parts) == 0 {
				if x.cpus.Intersects(held) {
					t.Fatalf("step %d: %s's CPUs %s are another balloon's too", step, x.name(), x.cpus)
				}
				held = held.Union(x.cpus)
				return
			}
			var union cpuset.Set
			for _, p := range x.parts {
				union = union.Union(p.cpus)
			}
			if !union.Equal(x.cpus) {
				t.Fatalf("step %d: composite %s has CPUs %s, its parts %s", step, x.name(), x.cpus, union)
			}
		})
	}
	if free := s.available.Difference(held); !free.Equal(s.freeSet()) || s.nFree != free.Size() {
		t.Fatalf("step %d: free %s (count %d), the balloons leave %s", step, s.freeSet(), s.nFree, free)
	}
	want := s.ix.newCounts()
	for id := range s.freeSet().All() {
		want.add(s.ix.cpus[id], 1)
	}
	if !reflect.DeepEqual(want, s.freeCounts) {
		t.Fatalf("step %d: per-group free counts differ from a recount", step)
	}
	for _, ty := range s.types {
		got := slices.Sorted(slices.Values(insts[ty]))
		if !slices.Equal(got, ty.insts) && len(got)+len(ty.insts) > 0 {
			t.Fatalf("step %d: type %s lists instances %v, its balloons and parts use %v", step, ty.Name, ty.insts, got)
		}
	}
}
