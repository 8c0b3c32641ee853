package balloons_test

import (
	"path"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// reservedNamespaces are the namespaces a harness's configuration lets into
// the reserved balloon besides kube-system (set by tests that configure
// reservedPoolNamespaces or redefine the reserved type).
var reservedNamespaces = map[string][]string{}

// check verifies, against the policy's dump and what the runtime was told,
// after every step:
//   - balloons are disjoint, inside the available CPUs, and with the free
//     CPUs make up exactly the available CPUs;
//   - every balloon's size is within its type's minCPUs and maxCPUs, and
//     holds its containers' requests (or is at maxCPUs);
//   - every container's cpuset, as the runtime holds it (adjustment plus
//     updates), is what the policy believes it gave (no missed update) and
//     lies inside its balloon's CPUs and the idle CPUs it shares;
//   - shared idle CPUs are free CPUs;
//   - every container's mems name nodes that have memory;
//   - only kube-system, the reserved namespaces, or pods annotated for it
//     run in the reserved balloon.
func (h *harness) check() {
	h.TB.Helper()
	if h.noCheck {
		return
	}
	d := h.dump()
	avail, free := policytest.MustSet(h.TB, d.Available), policytest.MustSet(h.TB, d.Free)
	union := free
	type bl struct{ own, pinnable cpuset.Set }
	byName := map[string]bl{}
	for _, b := range d.Balloons {
		own := policytest.MustSet(h.TB, b.CPUs)
		if own.Intersects(union) {
			h.TB.Errorf("balloon %s: CPUs %s overlap other balloons' or free CPUs (%s)", b.Name, own, own.Intersection(union))
		}
		union = union.Union(own)
		if !own.IsSubsetOf(avail) {
			h.TB.Errorf("balloon %s: CPUs %s outside the available %s", b.Name, own, avail)
		}
		n := own.Size()
		if n < b.MinCPUs || b.MaxCPUs > 0 && n > b.MaxCPUs {
			h.TB.Errorf("balloon %s: %d CPUs, outside [minCPUs %d, maxCPUs %d]", b.Name, n, b.MinCPUs, b.MaxCPUs)
		}
		if len(b.Containers) > 0 && int64(n)*1000 < b.RequestMilli && n != b.MaxCPUs {
			h.TB.Errorf("balloon %s: %d CPUs for %dm of requests", b.Name, n, b.RequestMilli)
		}
		if len(b.Containers) > 0 && n == 0 {
			h.TB.Errorf("balloon %s: containers %v and no CPU", b.Name, b.Containers)
		}
		shared := policytest.MustSet(h.TB, b.SharedIdle)
		if !shared.IsSubsetOf(free) {
			h.TB.Errorf("balloon %s: shares CPUs %s that are not free (%s)", b.Name, shared, free)
		}
		byName[b.Name] = bl{own, own.Union(shared)}
	}
	if !union.Equal(avail) {
		h.TB.Errorf("balloons and free CPUs make %s, want the available %s", union, avail)
	}
	if len(d.Containers) != len(h.Containers) {
		h.TB.Errorf("policy knows %d containers, the runtime runs %d", len(d.Containers), len(h.Containers))
	}
	pinCPU := !strings.Contains(h.Config, "pinCPU: false")
	var withMemory []uint32
	for _, n := range h.Topology.NumaNodes {
		if n.MemoryBytes > 0 {
			withMemory = append(withMemory, n.Id)
		}
	}
	memNodes := cpuset.New(withMemory...)
	for _, c := range d.Containers {
		hc := h.Containers[c.ID]
		if hc == nil {
			h.TB.Errorf("policy knows container %s the runtime does not run", c.ID)
			continue
		}
		got := hc.GetAssignment().GetCpusetCpus()
		if got != c.CPUs {
			h.TB.Errorf("%s: runtime holds cpus %q, policy gave %q (a missing update?)", c.ID, got, c.CPUs)
		}
		if m := hc.GetAssignment().GetCpusetMems(); m != c.Mems {
			h.TB.Errorf("%s: runtime holds mems %q, policy gave %q", c.ID, m, c.Mems)
		}
		if m := policytest.MustSet(h.TB, c.Mems); !m.IsSubsetOf(memNodes) {
			h.TB.Errorf("%s: mems %s name nodes without memory (nodes with memory: %s)", c.ID, m, memNodes)
		}
		if c.Balloon == "" {
			continue
		}
		b, ok := byName[c.Balloon]
		if !ok {
			h.TB.Errorf("%s: in balloon %s, which does not exist", c.ID, c.Balloon)
			continue
		}
		if pinCPU && !policytest.MustSet(h.TB, got).IsSubsetOf(b.pinnable) || pinCPU && got == "" {
			h.TB.Errorf("%s: cpus %q outside its balloon %s (%s, idle shared included)", c.ID, got, c.Balloon, b.pinnable)
		}
		if strings.HasPrefix(c.Balloon, "reserved[") && !h.mayReserve(c.ID, c.Namespace) {
			h.TB.Errorf("%s: namespace %q runs in the reserved balloon", c.ID, c.Namespace)
		}
	}
}

func (h *harness) mayReserve(id, ns string) bool {
	if ns == "kube-system" {
		return true
	}
	for _, g := range reservedNamespaces[h.TB.Name()] {
		if ok, _ := path.Match(g, ns); ok {
			return true
		}
	}
	c := h.Containers[id]
	for k, v := range h.Pods[c.GetPodSandboxId()].GetAnnotations() {
		if strings.HasPrefix(k, "balloon.balloons.resource-policy.nri.io") && v == "reserved" {
			return true
		}
	}
	return false
}
