package topologyaware_test

import (
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// check verifies, against the policy's dump and what the runtime was told:
//   - every container's cpuset as the runtime holds it (adjustment plus
//     updates) is what the policy believes it gave, and a shared container's
//     is its pool's shared set: no shared-pool change went without an update;
//   - exclusive cpusets have the requested size and are disjoint from each
//     other and from every shared and reserved cpuset;
//   - the reserved CPUs go to reserved containers only, and those only to
//     kube-system, reservedPoolNamespaces or prefer-reserved-cpus pods;
//   - no cpuset reaches outside the available CPUs;
//   - cpuset_mems is the chosen pool's memory nodes when pinMemory (of
//     the default kinds, unless a memory-type annotation asks for others),
//     or more where the memory accounting widened them, and always the
//     nodes its memory is accounted to;
//   - DRA claims' CPUs are disjoint from each other and from every
//     exclusive, shared and reserved cpuset; a claim's containers have
//     exactly its CPUs, and one that requests CPU of its own also its
//     pool's shared CPUs, as nri-plugins gives them (checkClaims).
func (h *harness) check(reservedNS ...string) {
	h.TB.Helper()
	d := h.dump()
	avail, reserved := policytest.MustSet(h.TB, d.Available), policytest.MustSet(h.TB, d.Reserved)
	pools := map[string]int{}
	own := map[string]string{} // container → its exclusive CPUs (exclusive, mixed)
	for i, p := range d.Pools {
		pools[p.Name] = i
		for _, g := range p.Exclusive {
			own[g.Container] = g.CPUs
		}
	}
	if len(d.Containers) != len(h.Containers) {
		h.TB.Errorf("policy knows %d containers, the runtime runs %d", len(d.Containers), len(h.Containers))
	}
	var exclusive cpuset.Set
	var shared []cpuset.Set
	var claimed []claimCheck
	pinMemory := !strings.Contains(h.Config, "pinMemory: false")
	for _, c := range d.Containers {
		hc := h.Containers[c.ID]
		if hc == nil {
			h.TB.Errorf("policy knows container %s the runtime does not run", c.ID)
			continue
		}
		got := hc.Assignment.GetCpusetCpus()
		if got != c.CPUs {
			h.TB.Errorf("%s: runtime holds cpus %q, policy gave %q (a missing update?)", c.ID, got, c.CPUs)
		}
		set := policytest.MustSet(h.TB, got)
		if !set.IsSubsetOf(avail) {
			h.TB.Errorf("%s: cpus %s outside the available %s", c.ID, set, avail)
		}
		if c.Kind != "reserved" && set.Intersects(reserved) {
			h.TB.Errorf("%s (%s): cpus %s include reserved CPUs %s", c.ID, c.Kind, set, reserved)
		}
		pool := d.Pools[pools[c.Pool]]
		switch c.Kind {
		case "exclusive":
			if set.Intersects(exclusive) {
				h.TB.Errorf("%s: exclusive cpus %s overlap other grants %s", c.ID, set, exclusive)
			}
			exclusive = exclusive.Union(set)
			if want := hc.Resources.CpuRequestMilli / 1000; int64(set.Size()) != want {
				h.TB.Errorf("%s: %d exclusive CPUs, want %d", c.ID, set.Size(), want)
			}
		case "shared":
			if got != pool.Shared {
				h.TB.Errorf("%s: cpus %q, its pool %s shares %q", c.ID, got, pool.Name, pool.Shared)
			}
			shared = append(shared, set)
		case "reserved":
			pod := h.Pods[hc.PodSandboxId]
			ok := c.Namespace == "kube-system" || pod.Annotations["prefer-reserved-cpus.resource-policy.nri.io/pod"] == "true"
			for _, ns := range reservedNS {
				ok = ok || ns == c.Namespace
			}
			if !ok {
				h.TB.Errorf("%s: namespace %q got the reserved CPUs", c.ID, c.Namespace)
			}
			if !set.Equal(reserved) {
				h.TB.Errorf("%s: reserved container has %s, want %s", c.ID, set, reserved)
			}
		case "mixed":
			e := policytest.MustSet(h.TB, own[c.ID])
			if e.Intersects(exclusive) {
				h.TB.Errorf("%s: exclusive part %s overlaps other grants %s", c.ID, e, exclusive)
			}
			exclusive = exclusive.Union(e)
			if want := hc.Resources.CpuRequestMilli / 1000; int64(e.Size()) != want || hc.Resources.CpuRequestMilli%1000 == 0 {
				h.TB.Errorf("%s: mixed grant of %d exclusive CPUs for %dm", c.ID, e.Size(), hc.Resources.CpuRequestMilli)
			}
			if s := policytest.MustSet(h.TB, pool.Shared); !set.Equal(e.Union(s)) {
				h.TB.Errorf("%s: mixed cpus %s, want %s and pool %s's shared %s", c.ID, set, e, pool.Name, s)
			} else {
				shared = append(shared, s)
			}
		case "claim":
			cc := claimCheck{id: c.ID, cpus: set, claims: c.Claims}
			if hc.Resources.GetCpuRequestMilli() > 0 {
				cc.shared = policytest.MustSet(h.TB, pool.Shared)
				shared = append(shared, cc.shared)
			}
			claimed = append(claimed, cc)
			continue
		case "preserved":
			if got != "" {
				h.TB.Errorf("%s: cpu.preserve container was given %q", c.ID, got)
			}
		}
		wantMems := pool.Mems
		if !pinMemory || h.Pods[hc.PodSandboxId].Annotations["memory.preserve.resource-policy.nri.io/pod"] == "true" {
			wantMems = ""
		}
		if _, typed := h.Pods[hc.PodSandboxId].Annotations[annMemoryType]; typed && wantMems != "" {
			// memory-type: nodes of its kinds (TestMemoryType checks which).
			if hc.Assignment.GetCpusetMems() == "" {
				h.TB.Errorf("%s: memory-type container without mems", c.ID)
			}
			continue
		}
		if c.Kind == "preserved" || c.Kind == "fixed" {
			continue
		}
		// The memory accounting widens the nodes of a container whose
		// zone would be overcommitted: never narrower than its pool's.
		mems := hc.Assignment.GetCpusetMems()
		if mems != wantMems && (wantMems == "" || mems == "" ||
			!policytest.MustSet(h.TB, wantMems).IsSubsetOf(policytest.MustSet(h.TB, mems))) {
			h.TB.Errorf("%s: mems %q, want pool %s's %q or more", c.ID, mems, pool.Name, wantMems)
		}
		if c.MemZone != "" && mems != "" && mems != c.MemZone {
			h.TB.Errorf("%s: mems %q, but its memory is accounted to nodes %s", c.ID, mems, c.MemZone)
		}
	}
	for _, s := range shared {
		if s.Intersects(exclusive) {
			h.TB.Errorf("shared cpus %s overlap exclusive grants %s", s, exclusive)
		}
		if s.IsEmpty() {
			h.TB.Errorf("a shared container has no CPU")
		}
	}
	h.checkClaims(d, append(shared, exclusive, reserved), claimed)
}

type claimCheck struct {
	id     string
	cpus   cpuset.Set
	claims []string
	shared cpuset.Set // its pool's shared CPUs, for a holder with CPU of its own
}

func (h *harness) checkClaims(d dump, taken []cpuset.Set, holders []claimCheck) {
	byUID := map[string]cpuset.Set{}
	var all cpuset.Set
	for _, c := range d.Claims {
		set := policytest.MustSet(h.TB, c.CPUs)
		byUID[c.UID] = set
		if c.Foreign {
			continue
		}
		if set.Intersects(all) {
			h.TB.Errorf("claim %s: cpus %s overlap other claims' %s", c.UID, set, all)
		}
		all = all.Union(set)
		for _, t := range taken {
			if set.Intersects(t) {
				h.TB.Errorf("claim %s: cpus %s overlap a container's exclusive, shared or reserved %s", c.UID, set, t)
			}
		}
	}
	for _, c := range holders {
		var want cpuset.Set
		for _, uid := range c.claims {
			want = want.Union(byUID[uid])
		}
		if !c.cpus.Equal(want.Union(c.shared)) || want.IsEmpty() {
			h.TB.Errorf("%s: holds claims %v with cpus %s (and shares %s), has %s", c.id, c.claims, want, c.shared, c.cpus)
		}
	}
}
