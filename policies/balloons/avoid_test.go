package balloons_test

import (
	"fmt"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestAvoidedDevicesInTurn: on n4c16 (nodes 0-3 are cpu0-3 … cpu12-15, a
// package per two nodes) a type without devices avoids the nodes two other
// types prefer one at a time, in the order the types are listed, as
// nri-plugins' resizeCpusWithDevices applies its "far from" hints. A
// 7-CPU balloon cannot avoid both nodes (the reserved cpu0-1 leave 6
// outside them), so it avoids the first one listed
// and takes CPUs of the second (nri-plugins' ResizeCpus on this tree
// allocates from 2-7,12-15 and 2-11). Dropping both at once, as we did,
// failed and avoided neither: the balloon took cpu8-14. It runs natively
// and through the .wasm, call by call.
func TestAvoidedDevicesInTurn(t *testing.T) {
	for _, tc := range []struct {
		first, second int // the nodes of the types listed first and second
	}{{2, 3}, {3, 2}} {
		t.Run(fmt.Sprintf("node%d-first", tc.first), func(t *testing.T) {
			calls := 0
			h := mustOpen(t, teeOpener(&calls), "N4C16", fmt.Sprintf(`
reservedResources: {cpu: "cpuset:0-1"}
balloonTypes:
- name: near%[1]d
  namespaces: [near%[1]d]
  preferCloseToDevices: [/sys/devices/system/node/node%[1]d]
- name: near%[2]d
  namespaces: [near%[2]d]
  preferCloseToDevices: [/sys/devices/system/node/node%[2]d]
- name: app
  namespaces: [app]
`, tc.first, tc.second))
			h.Create(ctr("a", 7000).In("app"))
			got := policytest.MustSet(t, h.balloon(h.balloonOf("a")).CPUs)
			first := cpuset.New(uint32(4*tc.first), uint32(4*tc.first+1), uint32(4*tc.first+2), uint32(4*tc.first+3))
			if got.Size() != 7 || !got.Intersection(first).IsEmpty() {
				t.Errorf("app balloon has CPUs %s; want 7 CPUs, none of node%d's %s (the first device avoided)", got, tc.first, first)
			}
			if calls < 3 {
				t.Errorf("%d calls compared", calls)
			}
		})
	}
}

// TestTypeWithDevicesAvoidsOthers: a type with a device of its own avoids
// the devices other types prefer, as nri-plugins' fillFarFromDevices
// gives every type the devices it does not prefer itself. near1's 6 CPUs
// do not fit node1 (4 CPUs), so its preference is dropped; balancing would
// take package 1 (the most free CPUs), but node3 belongs to near3, so it
// takes package 0's (nri-plugins' ResizeCpus allocates from 1-7: cpu0 is
// the reserved balloon's). A type with devices avoided nothing before: its
// balloon took cpu8-13, node3's included. Natively and through the .wasm.
func TestTypeWithDevicesAvoidsOthers(t *testing.T) {
	calls := 0
	h := mustOpen(t, teeOpener(&calls), "N4C16", `
balloonTypes:
- name: near1
  namespaces: [near1]
  allocatorTopologyBalancing: true
  preferCloseToDevices: [/sys/devices/system/node/node1]
- name: near3
  namespaces: [near3]
  preferCloseToDevices: [/sys/devices/system/node/node3]
`)
	h.Create(ctr("a", 6000).In("near1"))
	got := policytest.MustSet(t, h.balloon(h.balloonOf("a")).CPUs)
	if pkg0 := cpuset.MustParse("0-7"); got.Size() != 6 || !got.IsSubsetOf(pkg0) {
		t.Errorf("near1 balloon has CPUs %s; want 6 CPUs of package 0 %s, away from near3's node3", got, pkg0)
	}
	h.Create(ctr("b", 2000).In("near3"))
	if got := policytest.MustSet(t, h.balloon(h.balloonOf("b")).CPUs); !got.IsSubsetOf(cpuset.MustParse("12-15")) {
		t.Errorf("near3 balloon has CPUs %s; want them in its node3 12-15", got)
	}
}

// TestPreferCoreTypeAsPriorities: preferCoreType picks nri-plugins' CPU
// priority classes, as its virtual devices "performance cores" (the high
// class) and "efficient cores" (the low class) do, and the other types
// avoid both. On N4C16EPP the energy-performance preferences make cpu4-5
// high and cpu0-3,6-7 low (package 0); package 1's, one known preference,
// are normal. The core types alone (none here) gave both types no CPU to
// prefer and the others nothing to avoid. Natively and through the .wasm.
func TestPreferCoreTypeAsPriorities(t *testing.T) {
	calls := 0
	h := mustOpen(t, teeOpener(&calls), "N4C16EPP", `
balloonTypes:
- name: fast
  namespaces: [fast]
  preferCoreType: performance
- name: slow
  namespaces: [slow]
  preferCoreType: efficient
- name: app
  namespaces: [app]
`)
	for _, tc := range []struct {
		id, ns string
		milli  int64
		within string
	}{
		{"f", "fast", 2000, "4-5"},
		{"s", "slow", 2000, "0-3,6-7"},
		{"a", "app", 4000, "8-15"},
	} {
		h.Create(ctr(tc.id, tc.milli).In(tc.ns))
		got := policytest.MustSet(t, h.balloon(h.balloonOf(tc.id)).CPUs)
		if want := cpuset.MustParse(tc.within); got.Size() != int(tc.milli/1000) || !got.IsSubsetOf(want) {
			t.Errorf("%s balloon has CPUs %s; want %d of %s", tc.ns, got, tc.milli/1000, want)
		}
	}
}
