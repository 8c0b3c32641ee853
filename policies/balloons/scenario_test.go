package balloons_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// The scenarios run natively (TestScenarios) and natively and in Wasm at
// once (TestNativeAndWasmAgree), on every fixture machine; the harness
// checks the invariants after every step.

const typesConfig = `
reservedPoolNamespaces: [monitoring]
balloonTypes:
- name: by-label
  matchExpressions:
  - {key: pod/labels/tier, operator: In, values: [fast, faster]}
  maxCPUs: 4
- name: prod
  namespaces: [prod-*]
  minCPUs: 1
  maxCPUs: 2
- name: spare
  maxCPUs: 1
`

// selectionScenario: the annotation (container form over pod form), then
// matchExpressions and namespaces in list order, then default; kube-system
// and reservedPoolNamespaces in reserved.
func selectionScenario(t *testing.T, open opener, machine string) {
	reservedNamespaces[t.Name()] = []string{"monitoring"}
	h := mustOpen(t, open, machine, typesConfig)
	for _, tc := range []struct {
		s    spec
		want string
	}{
		{ctr("sys", 100).In("kube-system"), "reserved[0]"},
		{ctr("mon", 100).In("monitoring"), "reserved[0]"},
		{ctr("lab", 500).Label("tier", "fast").In("prod-a"), "by-label[0]"},
		{ctr("ns", 500).In("prod-b"), "prod[0]"},
		{ctr("other", 500), "default[0]"},
		{ctr("ann", 500).In("prod-c").With("balloon.balloons.resource-policy.nri.io/pod", "spare"), "spare[0]"},
		{ctr("cann", 500).Named("side").In("prod-c").With("balloon.balloons.resource-policy.nri.io/pod", "prod").
			With("balloon.balloons.resource-policy.nri.io/container.side", "spare"), "spare[0]"},
		{ctr("bare", 100).With("balloon.balloons.resource-policy.nri.io", "reserved"), "reserved[0]"},
	} {
		h.Create(tc.s)
		if got := h.balloonOf(tc.s.ID); got != tc.want {
			t.Errorf("%s: in %s, want %s", tc.s.ID, got, tc.want)
		}
	}
	_, err := h.TryCreate(ctr("bad", 100).With("balloon.balloons.resource-policy.nri.io/pod", "nope"))
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "pod.annotations[balloon.balloons.resource-policy.nri.io/pod]")
}

// inflateScenario: a balloon inflates as containers join and deflates as
// they leave, every container of a resized balloon is updated, a full
// balloon (maxCPUs) makes a new one, an emptied one above minBalloons goes.
func inflateScenario(t *testing.T, open opener, machine string) {
	h := mustOpen(t, open, machine, "balloonTypes:\n- name: app\n  namespaces: [app]\n  maxCPUs: 3\n")
	h.Create(ctr("a", 600).In("app"))
	if b := h.balloon("app[0]"); policytest.MustSet(t, b.CPUs).Size() != 1 {
		t.Fatalf("app[0] has %s for 600m, want 1 CPU", b.CPUs)
	}
	resp := h.Create(ctr("b", 600).In("app"))
	if len(resp.Updates) != 1 || resp.Updates[0].ContainerId != "a" {
		t.Errorf("inflating app[0] updated %v, want a", resp.Updates)
	}
	resp = h.Create(ctr("c", 1000).In("app"))
	if n := policytest.MustSet(t, h.balloon("app[0]").CPUs).Size(); n != 3 || len(resp.Updates) != 2 {
		t.Errorf("app[0] has %d CPUs (want 3), updates %v (want a and b)", n, resp.Updates)
	}
	h.Create(ctr("d", 1500).In("app"))
	if got := h.balloonOf("d"); got != "app[1]" {
		t.Errorf("d in %s, want a new app[1]", got)
	}
	if ups := h.Remove("c"); len(ups) != 2 || policytest.MustSet(t, h.balloon("app[0]").CPUs).Size() != 2 {
		t.Errorf("removing c: updates %v, app[0] %s; want a and b updated, 2 CPUs", ups, h.balloon("app[0]").CPUs)
	}
	h.Remove("d")
	for _, b := range h.dump().Balloons {
		if b.Name == "app[1]" {
			t.Errorf("empty app[1] kept")
		}
	}
	// An update resizes too.
	ups, err := h.Update("a", &abi.Resources{CpuRequestMilli: 1900})
	if err != nil || policytest.MustSet(t, h.balloon("app[0]").CPUs).Size() != 3 || len(ups) != 2 {
		t.Errorf("update a to 1900m: %v, updates %v, app[0] %s", err, ups, h.balloon("app[0]").CPUs)
	}
	_, err = h.Update("a", &abi.Resources{CpuRequestMilli: 5000})
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "resources.cpu_request_milli")
	// A best-effort container still gets a CPU.
	h.Create(ctr("be", 0).In("app"))
}

// fillScenario: preferNewBalloons, preferSpreadingPods, groupBy,
// preferPerNamespaceBalloon, minBalloons and maxBalloons.
func fillScenario(t *testing.T, open opener, machine string) {
	h := mustOpen(t, open, machine, `
balloonTypes:
- name: solo
  namespaces: [solo]
  preferNewBalloons: true
  maxBalloons: 2
- name: spread
  namespaces: [spread]
  preferSpreadingPods: true
  preferNewBalloons: true
- name: grouped
  namespaces: [grp]
  groupBy: ${pod/labels/app}
  preferNewBalloons: true
- name: perns
  namespaces: [ns-*]
  preferPerNamespaceBalloon: true
- name: pre
  namespaces: [pre]
  minBalloons: 2
  maxBalloons: 2
  minCPUs: 1
  maxCPUs: 1
  allocatorPriority: high
`)
	if h.balloon("pre[1]").CPUs == "" {
		t.Errorf("minBalloons: pre[1] has no CPUs")
	}
	h.Create(ctr("s1", 100).In("solo"))
	h.Create(ctr("s2", 100).In("solo"))
	h.Create(ctr("s3", 100).In("solo"))
	if a, b, c := h.balloonOf("s1"), h.balloonOf("s2"), h.balloonOf("s3"); a == b || c != "solo[0]" && c != "solo[1]" {
		t.Errorf("solo: %s %s %s; want two balloons, the third container in one of them (maxBalloons 2)", a, b, c)
	}
	h.Create(ctr("p1", 100).In("spread").OfPod("pp").Named("x"))
	h.Create(ctr("p2", 100).In("spread").OfPod("pp").Named("y"))
	if h.balloonOf("p1") == h.balloonOf("p2") {
		t.Errorf("preferSpreadingPods: both containers of pp in %s", h.balloonOf("p1"))
	}
	h.Create(ctr("g1", 100).In("grp").Label("app", "web"))
	h.Create(ctr("g2", 100).In("grp").Label("app", "db"))
	h.Create(ctr("g3", 100).In("grp").Label("app", "web"))
	if h.balloonOf("g1") != h.balloonOf("g3") || h.balloonOf("g1") == h.balloonOf("g2") {
		t.Errorf("groupBy: web in %s and %s, db in %s", h.balloonOf("g1"), h.balloonOf("g3"), h.balloonOf("g2"))
	}
	h.Create(ctr("n1", 100).In("ns-a"))
	h.Create(ctr("n2", 100).In("ns-b"))
	h.Create(ctr("n3", 100).In("ns-a"))
	if h.balloonOf("n1") != h.balloonOf("n3") || h.balloonOf("n1") == h.balloonOf("n2") {
		t.Errorf("perNamespace: ns-a in %s and %s, ns-b in %s", h.balloonOf("n1"), h.balloonOf("n3"), h.balloonOf("n2"))
	}
	h.Create(ctr("q1", 800).In("pre"))
	h.Create(ctr("q2", 800).In("pre"))
	if _, err := h.TryCreate(ctr("q3", 800).In("pre")); err == nil {
		t.Errorf("a third container fit in two 1-CPU balloons")
	}
	h.Remove("q1")
	if h.balloon("pre[0]").CPUs == "" {
		t.Errorf("minBalloons: pre[0] deleted or emptied")
	}
}

// sharingScenario: shareIdleCPUsInSame, hideHyperthreads (type and
// annotation), cpu.preserve and memory.preserve.
func sharingScenario(t *testing.T, open opener, machine string) {
	h := mustOpen(t, open, machine, `
balloonTypes:
- name: burst
  namespaces: [burst]
  shareIdleCPUsInSame: numa
- name: ht
  namespaces: [ht]
  hideHyperthreads: true
  minCPUs: 2
`)
	h.Create(ctr("b1", 1000).In("burst"))
	b := h.balloon("burst[0]")
	if b.SharedIdle == "" {
		t.Fatalf("burst[0] shares no idle CPUs")
	}
	before := h.Containers["b1"].Assignment.CpusetCpus
	h.Create(ctr("b2", 1000).In("ht"))
	h.Create(ctr("b3", 2000).In("burst"))
	if h.Containers["b1"].Assignment.CpusetCpus == before {
		t.Logf("burst[0]'s CPUs unchanged after growing: %s", before)
	}
	h.Create(ctr("h1", 500).In("burst").With("hide-hyperthreads.resource-policy.nri.io/pod", "true"))
	h.Create(ctr("pc", 500).With("cpu.preserve.resource-policy.nri.io/pod", "true"))
	if a := h.Containers["pc"].Assignment; a.CpusetCpus != "" || a.CpusetMems != "" || h.balloonOf("pc") != "" {
		t.Errorf("cpu.preserve: got %v in %q", a, h.balloonOf("pc"))
	}
	h.Create(ctr("pm", 500).With("memory.preserve.resource-policy.nri.io/pod", "true"))
	if a := h.Containers["pm"].Assignment; a.CpusetCpus == "" || a.CpusetMems != "" {
		t.Errorf("memory.preserve: got %v", a)
	}
	h.Remove("b3")
	h.Remove("b1")
}

// compositeScenario: a composite balloon's CPUs are its parts' (all, or the
// least used type with balance-balloons).
func compositeScenario(t *testing.T, open opener, machine string) {
	h := mustOpen(t, open, machine, `
balloonTypes:
- name: both
  namespaces: [both]
  components: [{balloonType: near0}, {balloonType: near1}]
- name: either
  namespaces: [either]
  components: [{balloonType: near0}, {balloonType: near1}]
  componentCreation: balance-balloons
  preferNewBalloons: true
- name: near0
  preferCloseToDevices: [/sys/devices/system/node/node0]
- name: near1
  preferCloseToDevices: [/sys/devices/system/node/node1]
`)
	h.Create(ctr("c1", 3000).In("both"))
	b := h.balloon("both[0]")
	if len(b.Parts) != 2 || policytest.MustSet(t, b.CPUs).Size() != 4 {
		t.Errorf("both[0]: %d parts, CPUs %s; want 2 parts of 2 CPUs", len(b.Parts), b.CPUs)
	}
	h.Create(ctr("e1", 500).In("either"))
	h.Create(ctr("e2", 500).In("either"))
	p1, p2 := h.balloon(h.balloonOf("e1")).Parts, h.balloon(h.balloonOf("e2")).Parts
	if len(p1) != 1 || len(p2) != 1 || strings.Split(p1[0], "[")[0] == strings.Split(p2[0], "[")[0] {
		t.Errorf("balance-balloons: parts %v and %v, want one of each type", p1, p2)
	}
	h.Remove("c1")
	h.Remove("e1")
}

// reservedScenario: a reserved cpuset, availableResources, pinMemory off,
// and a reconfiguration that moves containers.
func reservedScenario(t *testing.T, open opener, machine string) {
	cfg := "reservedResources: {cpu: \"cpuset:0-1\"}\navailableResources: {cpu: \"exclude-cpuset:3\"}\npinMemory: false\n"
	h := mustOpen(t, open, machine, cfg)
	h.Create(ctr("k", 1500).In("kube-system"))
	if got := h.balloon("reserved[0]").CPUs; got != "0-1" {
		t.Errorf("reserved[0] = %s, want 0-1", got)
	}
	h.Create(ctr("d", 2500))
	if policytest.MustSet(t, h.balloon("default[0]").CPUs).Intersects(policytest.MustSet(t, "0-1,3")) {
		t.Errorf("default took reserved or unavailable CPUs: %s", h.balloon("default[0]").CPUs)
	}
	if h.Containers["d"].Assignment.CpusetMems != "" {
		t.Errorf("pinMemory false answered mems %q", h.Containers["d"].Assignment.CpusetMems)
	}
	if err := h.Reconfigure("balloonTypes:\n- name: all\n  namespaces: [\"*\"]\n  shareIdleCPUsInSame: system\n"); err != nil {
		t.Fatalf("Reconfigure: %v", err)
	}
	if h.balloonOf("d") != "all[0]" || h.balloonOf("k") != "reserved[0]" {
		t.Errorf("after Reconfigure: d in %s, k in %s", h.balloonOf("d"), h.balloonOf("k"))
	}
	err := h.Reconfigure("balloonTypes:\n- name: all\n  namespaces: [\"*\"]\n  maxCPUs: -1\n")
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "config")
	h.Create(ctr("e", 500))
}

// devicesScenario: a type preferring CPU 5's L2 and one preferring the
// last CPU's L3, named by their sysfs cache paths, get CPUs of those caches
// (on the fixtures an L2 is a core, an L3 a NUMA node); a type whose
// devices the node lacks still gets CPUs.
func devicesScenario(t *testing.T, open opener, machine string) {
	topo := policytest.Machine(t, machine)
	last := topo.Cpus[len(topo.Cpus)-1]
	var l2, l3 cpuset.Set
	for _, c := range topo.Cpus {
		if c.Id == 5 {
			l2 = cpuset.New(c.ThreadSiblings...)
		}
	}
	for _, n := range topo.NumaNodes {
		if n.Id == last.NumaNode {
			l3 = cpuset.New(n.Cpus...)
		}
	}
	h := mustOpen(t, open, machine, fmt.Sprintf(`
balloonTypes:
- name: l2
  namespaces: [l2]
  preferCloseToDevices: [/sys/devices/system/cpu/cpu5/cache/index2]
- name: l3
  namespaces: [l3]
  preferCloseToDevices: [/sys/devices/system/cpu/cpu%d/cache/index3]
- name: gone
  namespaces: [gone]
  preferCloseToDevices: [/sys/class/net/nosuch0, /sys/devices/pci0000:ff/0000:ff:1f.7/net/nosuch1]
`, last.Id))
	h.Create(ctr("a", 2000).In("l2"))
	if got := h.balloon(h.balloonOf("a")).CPUs; got != l2.String() {
		t.Errorf("l2 balloon has CPUs %s, want cpu5's L2 %s", got, l2)
	}
	h.Create(ctr("b", 3000).In("l3"))
	if got := policytest.MustSet(t, h.balloon(h.balloonOf("b")).CPUs); got.Size() != 3 || !got.IsSubsetOf(l3.Difference(l2)) {
		t.Errorf("l3 balloon has CPUs %s, want 3 of cpu%d's L3 %s outside the l2 balloon", got, last.Id, l3)
	}
	h.Create(ctr("c", 1000).In("gone"))
	if got := policytest.MustSet(t, h.balloon(h.balloonOf("c")).CPUs); got.Size() != 1 {
		t.Errorf("a type with missing devices got CPUs %s, want 1", got)
	}
	h.Remove("a")
	h.Create(ctr("a2", 1000).In("l2"))
	if got := policytest.MustSet(t, h.balloon(h.balloonOf("a2")).CPUs); got.Size() != 1 || !got.IsSubsetOf(l2) {
		t.Errorf("l2 balloon has CPUs %s, want one of %s", got, l2)
	}
	h.Remove("b")
	h.Remove("c")
}

// restoreScenario: a restart from the journal keeps every container where
// it was; the policy goes on from there.
func restoreScenario(t *testing.T, open opener, machine string) {
	cfg := "balloonTypes:\n- name: app\n  namespaces: [app]\n  maxCPUs: 4\n  shareIdleCPUsInSame: package\n- name: ht\n  namespaces: [ht]\n  hideHyperthreads: true\n"
	h := mustOpen(t, open, machine, cfg)
	for i, id := range policytest.IDs(12, "r") {
		ns := []string{"app", "default", "ht"}[i%3]
		h.Create(ctr(id, int64(300+200*(i%4))).In(ns))
	}
	h.Create(ctr("k", 200).In("kube-system"))
	h.Remove("r0004")
	before := h.dump()
	h2, err := open(t, machine, cfg, h.RestoreState())
	if err != nil {
		t.Fatalf("Init with restore: %v", err)
	}
	h2.check()
	after := h2.dump()
	for i, c := range after.Containers {
		if b := before.Containers[i]; c.ID != b.ID || c.Balloon != b.Balloon || c.CPUs != b.CPUs {
			t.Errorf("restored %s in %s with %s, was %s in %s with %s", c.ID, c.Balloon, c.CPUs, b.ID, b.Balloon, b.CPUs)
		}
	}
	h2.Create(ctr("new", 700).In("app"))
	h2.Remove("r0000")
	// A journal without the annotations (another policy's) is adopted too.
	rs := h2.RestoreState()
	for _, c := range rs.Containers {
		c.Assignment.Annotations = nil
	}
	h3, err := open(t, machine, cfg, rs)
	if err != nil {
		t.Fatalf("Init with a bare journal: %v", err)
	}
	h3.check()
	h3.Create(ctr("more", 700).In("app"))
}

// memKindName names a node's memory as memoryTypes does (CXL is PMEM).
func memKindName(n *abi.NUMANode) string {
	switch n.MemoryKind {
	case abi.MemoryKind_MEMORY_KIND_HBM:
		return "HBM"
	case abi.MemoryKind_MEMORY_KIND_PMEM, abi.MemoryKind_MEMORY_KIND_CXL:
		return "PMEM"
	}
	return "DRAM"
}

// closestMems are the memory nodes a container on cpus should get for the
// memory types kinds: for each NUMA node of cpus and each kind, the nodes
// with memory of that kind at the least distance; every kind where the
// machine has none of kinds.
func closestMems(topo *abi.Topology, cpus cpuset.Set, kinds ...string) cpuset.Set {
	dist := func(a, b *abi.NUMANode) uint32 {
		for _, d := range a.Distances {
			if d.Node == b.Id {
				return d.Distance
			}
		}
		return 255
	}
	cpuNode := map[uint32]uint32{}
	for _, c := range topo.Cpus {
		cpuNode[c.Id] = c.NumaNode
	}
	byID := map[uint32]*abi.NUMANode{}
	for _, n := range topo.NumaNodes {
		byID[n.Id] = n
	}
	var mems []uint32
	for id := range cpus.All() {
		from := byID[cpuNode[id]]
		for _, k := range kinds {
			best := uint32(1 << 31)
			for _, n := range topo.NumaNodes {
				if n.MemoryBytes > 0 && memKindName(n) == k {
					best = min(best, dist(from, n))
				}
			}
			for _, n := range topo.NumaNodes {
				if n.MemoryBytes > 0 && memKindName(n) == k && dist(from, n) == best {
					mems = append(mems, n.Id)
				}
			}
		}
	}
	if len(mems) == 0 {
		return closestMems(topo, cpus, "DRAM", "PMEM", "HBM")
	}
	return cpuset.New(mems...)
}

// memTypeConfig: a DRAM-only type that grows without bound, and one that
// leaves memory alone.
const memTypeConfig = "balloonTypes:\n- name: mem\n  namespaces: [mem]\n  memoryTypes: [DRAM]\n- name: nopin\n  namespaces: [nopin]\n  pinMemory: false\n"

// memTypeScenario: the memory-type annotation gives a container the
// closest nodes of its own types (container form over pod form over the
// bare key, any case, spaces around entries), an invalid value leaves the
// type's memoryTypes, memory.preserve and pinMemory false win; the mems
// follow a resize crossing NUMA nodes next to an unannotated container's,
// and a restart keeps them.
func memTypeScenario(t *testing.T, open opener, machine string) {
	const key = "memory-type.resource-policy.nri.io"
	topo := policytest.Machine(t, machine)
	h := mustOpen(t, open, machine, memTypeConfig)
	// want are the types each container's mems follow; "" for none.
	want := map[string][]string{}
	add := func(s spec, dump string, kinds ...string) {
		t.Helper()
		h.Create(s)
		want[s.ID] = kinds
		for _, c := range h.dump().Containers {
			if c.ID == s.ID && c.MemoryTypes != dump {
				t.Errorf("%s: memory types %q, want %q", s.ID, c.MemoryTypes, dump)
			}
		}
	}
	check := func(h *harness, step string) {
		t.Helper()
		for _, c := range h.dump().Containers {
			kinds := want[c.ID]
			switch {
			case kinds == nil:
				if c.Mems != "" {
					t.Errorf("%s: %s has mems %q, want none", step, c.ID, c.Mems)
				}
			case c.Mems != closestMems(topo, policytest.MustSet(t, c.CPUs), kinds...).String():
				t.Errorf("%s: %s on CPUs %s has mems %q, want the closest %v nodes %s",
					step, c.ID, c.CPUs, c.Mems, kinds, closestMems(topo, policytest.MustSet(t, c.CPUs), kinds...))
			}
		}
	}
	add(ctr("plain", 500).In("mem"), "", "DRAM")
	add(ctr("pm", 500).In("mem").With(key+"/pod", "pmem"), "PMEM", "PMEM")
	add(ctr("both", 500).In("mem").With(key, " Pmem , dram"), "DRAM,PMEM", "DRAM", "PMEM")
	add(ctr("cform", 500).In("mem").Named("side").With(key+"/pod", "dram").With(key+"/container.side", "PMEM"), "PMEM", "PMEM")
	add(ctr("pform", 500).In("mem").Named("main").With(key, "pmem").With(key+"/pod", "dram").With(key+"/container.side", "PMEM"), "DRAM", "DRAM")
	add(ctr("bad", 500).In("mem").With(key+"/pod", "dram,sram"), "", "DRAM")
	add(ctr("keep", 500).In("mem").With(key+"/pod", "pmem").With("memory.preserve.resource-policy.nri.io/pod", "true"), "")
	add(ctr("nopin", 500).In("nopin").With(key+"/pod", "pmem"), "")
	check(h, "created")
	// On the PMEM machine, nodes 2 and 3 are sockets 0's and 1's PMEM.
	pmemMachine := machine == "PMEM112CPUIsolated"
	mems := func(id string) string { return h.Containers[id].Assignment.CpusetMems }
	if pmemMachine && (mems("pm") != "2" && mems("pm") != "3" || mems("cform") != mems("pm") ||
		mems("both") != "0,2" && mems("both") != "1,3" || mems("plain") != "0" && mems("plain") != "1") {
		t.Errorf("mems: pm %s, cform %s, both %s, plain %s; want one socket's PMEM node, the same, its DRAM and PMEM nodes, its DRAM node",
			mems("pm"), mems("cform"), mems("both"), mems("plain"))
	}
	// Grow the balloon past its first node: the annotated containers' mems
	// follow, each with its own types.
	most := 0
	for _, n := range topo.NumaNodes {
		most = max(most, len(n.Cpus))
	}
	if most+8 < len(topo.Cpus) {
		add(ctr("grow", int64(most+1)*1000).In("mem"), "", "DRAM")
		if closestMems(topo, policytest.MustSet(t, h.balloon("mem[0]").CPUs), "DRAM").Size() < 2 {
			t.Errorf("mem[0] (%s) did not cross a NUMA node", h.balloon("mem[0]").CPUs)
		}
		check(h, "grown")
		if pmemMachine && (mems("pm") != "2-3" || mems("both") != "0-3" || mems("plain") != "0-1") {
			t.Errorf("after growing over both sockets: pm %s, both %s, plain %s; want 2-3, 0-3, 0-1", mems("pm"), mems("both"), mems("plain"))
		}
		h.Remove("grow")
		delete(want, "grow")
		check(h, "shrunk")
	}
	if _, err := h.Update("plain", &abi.Resources{CpuRequestMilli: 2500}); err != nil {
		t.Fatalf("update plain: %v", err)
	}
	check(h, "updated")
	before := h.dump()
	h2, err := open(t, machine, memTypeConfig, h.RestoreState())
	if err != nil {
		t.Fatalf("Init with restore: %v", err)
	}
	h2.check()
	for i, c := range h2.dump().Containers {
		if b := before.Containers[i]; c.ID != b.ID || c.Balloon != b.Balloon || c.CPUs != b.CPUs || c.Mems != b.Mems || c.MemoryTypes != b.MemoryTypes {
			t.Errorf("restored %s in %s with %s/%s (%s), was %s in %s with %s/%s (%s)",
				c.ID, c.Balloon, c.CPUs, c.Mems, c.MemoryTypes, b.ID, b.Balloon, b.CPUs, b.Mems, b.MemoryTypes)
		}
	}
	// The first call after the restart answers no other mems.
	resp := h2.Create(ctr("after", 100))
	want["after"] = []string{"DRAM", "PMEM", "HBM"}
	for _, u := range resp.Updates {
		if u.CpusetMems != "" {
			t.Errorf("after the restart %s was moved to mems %s", u.ContainerId, u.CpusetMems)
		}
	}
	check(h2, "restored")
	if _, err := h2.Update("plain", &abi.Resources{CpuRequestMilli: 3500}); err != nil {
		t.Fatalf("update plain after restore: %v", err)
	}
	check(h2, "restored and updated")
}

// draConfig publishes two instances of "dedicated".
const draConfig = "balloonTypes:\n- name: dedicated\n  publishDRADevices: true\n  minCPUs: 1\n  maxCPUs: 4\n  maxBalloons: 2\n"

func claimFor(uid string, devices ...string) *abi.Claim {
	c := &abi.Claim{Uid: uid, Namespace: "default", Name: "claim-" + uid}
	for i, d := range devices {
		c.Results = append(c.Results, &abi.DeviceAllocation{Request: fmt.Sprintf("r%d", i), Pool: "n1", Device: d})
	}
	return c
}

func (h *harness) allocate(c *abi.Claim) (*abi.AllocateResponse, error) {
	resp, err := h.Client.Allocate(context.Background(), &abi.AllocateRequest{Claim: c})
	if err == nil {
		h.Claims = append(h.Claims, &abi.PreparedClaim{Claim: c, Allocation: resp})
		h.Apply(resp.Updates)
	}
	h.check()
	return resp, err
}

// draScenario: devices, binding by CDI device and by env (the uid as it
// is in the variable's name, '-' kept), refusals,
// release, and a restart with a prepared claim.
func draScenario(t *testing.T, open opener, machine string) {
	h := mustOpen(t, open, machine, draConfig)
	devs, err := h.Client.Devices(context.Background(), &abi.DevicesRequest{})
	if err != nil || len(devs.Devices) != 2 || devs.Devices[0].Name != "dedicated-0" || devs.Devices[1].Capacities["cpu"].Value != "4" {
		t.Fatalf("Devices = %v, %v; want dedicated-0 and dedicated-1 with cpu 4", devs, err)
	}
	resp, err := h.allocate(claimFor("a1-b2", "dedicated-1"))
	if err != nil || len(resp.Devices) != 1 || resp.Devices[0].ContainerEdits.Env[0] != "DRA_BALLOON_a1-b2=dedicated-1" {
		t.Fatalf("Allocate = %v, %v", resp, err)
	}
	if _, err := h.allocate(claimFor("u2", "dedicated-1")); err == nil {
		t.Errorf("a second claim bound dedicated-1")
	}
	h.Create(ctr("w1", 1500).WithCDI("balloons.nri.io/claim=a1-b2-0"))
	h.Create(ctr("w2", 1500).WithCDI("other.io/x=y", "balloons.nri.io/claim=a1-b2-0"))
	if h.balloonOf("w1") != "dedicated[1]" || h.balloonOf("w2") != "dedicated[1]" {
		t.Errorf("claim holders in %s and %s, want dedicated[1]", h.balloonOf("w1"), h.balloonOf("w2"))
	}
	// Env binds only when the runtime reports no CDI devices.
	e := ctr("w3", 100)
	e.Env = []*abi.KeyValue{{Key: "DRA_BALLOON_a1-b2", Value: "dedicated-1"}}
	h.Create(e)
	// The uid as it is names the variable, '-' kept: the shell-safe
	// spelling is another variable.
	underscore := ctr("w6", 100)
	underscore.Env = []*abi.KeyValue{{Key: "DRA_BALLOON_a1_b2", Value: "dedicated-1"}}
	h.Create(underscore)
	if h.balloonOf("w6") != "default[0]" {
		t.Errorf("DRA_BALLOON_a1_b2 bound w6 to %s, want default[0]", h.balloonOf("w6"))
	}
	h.Remove("w6")
	forged := ctr("w4", 100).WithCDI("other.io/x=y")
	forged.Env = e.Env
	h.Create(forged)
	if h.balloonOf("w3") != "dedicated[1]" || h.balloonOf("w4") != "default[0]" {
		t.Errorf("env: w3 in %s (want dedicated[1]), w4 with CDI devices in %s (want default[0])", h.balloonOf("w3"), h.balloonOf("w4"))
	}
	_, err = h.TryCreate(ctr("w5", 100).WithCDI("balloons.nri.io/claim=nope-0"))
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "container.cdi_devices[0]")
	_, err = h.TryCreate(ctr("big", 3000).WithCDI("balloons.nri.io/claim=a1-b2-0"))
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources.cpu_request_milli")
	_, err = h.Client.Release(context.Background(), &abi.ReleaseRequest{Claim: claimFor("a1-b2")})
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "claim.uid")

	h2, err := open(t, machine, draConfig, h.RestoreState())
	if err != nil {
		t.Fatalf("Init with restore: %v", err)
	}
	h2.check()
	if b := h2.balloon("dedicated[1]"); b.Claim != "a1-b2" || len(b.Containers) != 3 {
		t.Errorf("restored dedicated[1]: claim %q, containers %v", b.Claim, b.Containers)
	}
	for _, id := range []string{"w1", "w2", "w3"} {
		h2.Remove(id)
	}
	if _, err := h2.Client.Release(context.Background(), &abi.ReleaseRequest{Claim: claimFor("a1-b2")}); err != nil {
		t.Errorf("Release: %v", err)
	}
	if _, err := h2.allocate(claimFor("u2", "dedicated-1")); err != nil {
		t.Errorf("Allocate after release: %v", err)
	}
	for _, c := range []*abi.Claim{claimFor(""), claimFor("u3"), claimFor("u3", "gpu-0"), claimFor("u3", "dedicated-0", "dedicated-1")} {
		if _, err := h2.allocate(c); err == nil {
			t.Errorf("claim %v accepted", c)
		}
	}
	if err := h2.Reconfigure("balloonTypes: []\n"); err == nil {
		t.Errorf("a configuration without the bound device accepted")
	}
}

// badConfigScenario: refusals of Init and Reconfigure name the field.
func badConfigScenario(t *testing.T, open opener, machine string) {
	for _, tc := range []struct{ cfg, field string }{
		{"balloonTypes:\n- name: a\n  minCPU: 1\n", "config.balloonTypes[0].minCPU"},
		{"balloonTypes:\n- name: a\n  minCPUs: 4\n  maxCPUs: 2\n", "config.balloonTypes[0].minCPUs"},
		{"balloonTypes:\n- name: a\n  minBalloons: 2\n  minCPUs: 100000\n", "config.balloonTypes[0].minBalloons"},
		{"reservedResources: {cpu: \"cpuset:0-99999\"}\n", "config.reservedResources.cpu"},
		{"cpuClasses: [{name: turbo}]\n", "config.cpuClasses"},
		{"availableResources: {cpu: \"cpuset:99990-99999\"}\n", "config.availableResources.cpu"},
		{"balloonTypes:\n- name: b\n- name: a\n  cpuClass: turbo\n  components: [{balloonType: b}]\n", "config.balloonTypes[1].cpuClass"},
	} {
		_, err := open(t, machine, tc.cfg, nil)
		policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, tc.field)
	}
	h := mustOpen(t, open, machine, "")
	h.Create(ctr("a", 500))
	err := h.Reconfigure("balloonTypes:\n- name: a\n  shareIdleCPUsInSame: planet\n")
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "config.balloonTypes[0].shareIdleCPUsInSame")
	h.Create(ctr("b", 500))
}

var scenarios = []policytest.Scenario[opener]{
	{Name: "selection", Run: selectionScenario},
	{Name: "inflate", Run: inflateScenario},
	{Name: "fill", Run: fillScenario},
	{Name: "sharing", Run: sharingScenario},
	{Name: "composite", Run: compositeScenario},
	{Name: "devices", Run: devicesScenario},
	{Name: "reserved", Run: reservedScenario},
	{Name: "restore", Run: restoreScenario},
	{Name: "memory-type", Run: memTypeScenario},
	{Name: "dra", Run: draScenario},
	{Name: "bad config", Run: badConfigScenario},
}

// TestScenarios runs every scenario natively on every fixture machine.
func TestScenarios(t *testing.T) {
	for _, m := range machines {
		for _, sc := range scenarios {
			t.Run(m+"/"+sc.Name, func(t *testing.T) { sc.Run(t, nativeOpen, m) })
		}
	}
}
