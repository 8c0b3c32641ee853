package policytest_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

func open(tb testing.TB, p *toy, restore *abi.RestoreState) *policytest.Runtime {
	tb.Helper()
	rt, err := policytest.Open(tb, toyRunner(tb, p), &abi.InitRequest{Topology: policytest.Machine(tb, "Desktop1Socket"), Restore: restore})
	if err != nil {
		tb.Fatal(err)
	}
	return rt
}

// TestRuntimeAppliesUpdates: the runtime holds each container's cpuset as
// the create adjustment and later updates leave it, and a restore state
// round-trips.
func TestRuntimeAppliesUpdates(t *testing.T) {
	rt := open(t, &toy{}, nil)
	checks := 0
	rt.AfterChange = func() { checks++ }
	rt.Create(policytest.Container("b", 500))
	rt.Create(policytest.Container("g", 2000).Guaranteed())
	if got := rt.CPUs("b").String(); got != "2-15" {
		t.Errorf("b holds %s, want 2-15 after g took 0-1", got)
	}
	if _, err := rt.TryCreate(policytest.Container("huge", 64000).Guaranteed()); err == nil {
		t.Error("64 CPUs fit in 14")
	}
	rt.Remove("g")
	if got := rt.CPUs("b").String(); got != "0-15" {
		t.Errorf("b holds %s, want 0-15 after g left", got)
	}
	if checks != 4 {
		t.Errorf("AfterChange ran %d times, want 4 (two creates, a refusal, a removal)", checks)
	}
	policytest.CheckPlacements(t, rt.Topology, rt.Containers)
	rs := rt.RestoreState()
	if len(rs.Pods) != 1 || len(rs.Containers) != 1 || rs.Containers[0].State != abi.ContainerState_CONTAINER_STATE_RUNNING {
		t.Fatalf("restore state %v, want b running in its pod", rs)
	}
	again := open(t, &toy{}, rs)
	if got := again.CPUs("b").String(); got != "0-15" || again.Order[0] != "b" {
		t.Errorf("restored runtime holds b on %s, order %v", got, again.Order)
	}
}

// TestRuntimeCatchesBadUpdates: an update of a container the runtime does
// not run, one container twice in an answer, and with SortedUpdates an
// answer out of order are failures.
func TestRuntimeCatchesBadUpdates(t *testing.T) {
	rec := &recorder{TB: t}
	rt := open(rec, &toy{}, nil)
	rt.Create(policytest.Container("a", 100))
	rt.Create(policytest.Container("b", 100))
	rt.SortedUpdates = true
	for _, tc := range []struct {
		updates []string
		want    string
	}{
		{[]string{"a", "b"}, ""},
		{[]string{"ghost"}, "unknown container"},
		{[]string{"a", "a"}, "updated twice"},
		{[]string{"b", "a"}, "not sorted"},
	} {
		rec.errors = nil
		var us []*abi.ContainerUpdate
		for _, id := range tc.updates {
			us = append(us, &abi.ContainerUpdate{ContainerId: id, CpusetCpus: "3"})
		}
		rt.Apply(us)
		if got := strings.Join(rec.errors, "; "); tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("updates %v: %q, want %q", tc.updates, got, tc.want)
		}
	}
}

// TestCheckPlacements: a cpuset or mems outside the machine, or that does
// not parse, is reported; an unpinned container passes.
func TestCheckPlacements(t *testing.T) {
	topo := policytest.Machine(t, "Desktop1Socket")
	ctr := func(cpus, mems string) *abi.Container {
		return &abi.Container{Assignment: &abi.ContainerAdjustment{CpusetCpus: cpus, CpusetMems: mems}}
	}
	for _, tc := range []struct {
		c    *abi.Container
		want string
	}{
		{ctr("0-15", "0"), ""},
		{ctr("", ""), ""},
		{&abi.Container{}, ""},
		{ctr("8-16", ""), "CPUs 16 that are not online"},
		{ctr("0", "1"), "nodes 1 without memory"},
		{ctr("x", ""), `cpus "x"`},
	} {
		rec := &recorder{TB: t}
		policytest.CheckPlacements(rec, topo, map[string]*abi.Container{"c": tc.c})
		if got := strings.Join(rec.errors, "; "); tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.c.GetAssignment(), got, tc.want)
		}
	}
}

func TestCheckDisjoint(t *testing.T) {
	rec := &recorder{TB: t}
	policytest.CheckDisjoint(rec, map[string]cpuset.Set{"a": cpuset.MustParse("0-3"), "b": cpuset.MustParse("4-5"), "c": cpuset.MustParse("3,5")})
	if want := []string{"CPU 3 is held by both a and c", "CPU 5 is held by both b and c"}; strings.Join(rec.errors, "; ") != strings.Join(want, "; ") {
		t.Errorf("errors %q, want %q", rec.errors, want)
	}
}

// TestTee: two builds that agree pass call after call; the first
// difference fails, naming the call.
func TestTee(t *testing.T) {
	rec := &recorder{TB: t}
	calls := 0
	tee := policytest.Tee{TB: rec, Want: toyRunner(t, &toy{}), Got: toyRunner(t, &toy{forgetUpdates: true}), Calls: &calls}
	rt, err := policytest.Open(rec, tee, &abi.InitRequest{Topology: policytest.Machine(t, "Desktop1Socket")})
	if err != nil {
		t.Fatal(err)
	}
	rt.Create(policytest.Container("b", 100))
	if len(rec.errors) != 0 || calls != 2 {
		t.Fatalf("agreeing builds: %q after %d calls", rec.errors, calls)
	}
	rt.Create(policytest.Container("g", 1000).Guaranteed())
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "call 2 CreateContainer") {
		t.Errorf("a forgotten update: %q, want the third call named", rec.errors)
	}
}

func TestMachines(t *testing.T) {
	names := policytest.MachineNames()
	if len(names) < 8 || names[0] != "Desktop1Socket" {
		t.Fatalf("machines %v", names)
	}
	for _, name := range names {
		if topo := policytest.Machine(t, name); len(topo.Cpus) == 0 || len(topo.NumaNodes) == 0 {
			t.Errorf("%s: %d CPUs, %d nodes", name, len(topo.Cpus), len(topo.NumaNodes))
		}
	}
	if _, err := policytest.LoadMachine("Mainframe"); err == nil || !strings.Contains(err.Error(), "Desktop1Socket") {
		t.Errorf("an unknown machine: %v, want an error listing the machines", err)
	}
	iso := policytest.Isolate(policytest.Machine(t, "N4C16"), cpuset.New(1, 2))
	if !iso.Cpus[1].Isolated || !iso.Cpus[2].Isolated || iso.Cpus[0].Isolated || policytest.Machine(t, "N4C16").Cpus[1].Isolated {
		t.Error("Isolate marks other CPUs or changes the shared fixture")
	}
}

func TestLatencies(t *testing.T) {
	var l policytest.Latencies
	if l.Percentile(0.5) != 0 {
		t.Error("no samples, a percentile")
	}
	for _, ms := range []int{9, 1, 5, 3, 7, 2, 8, 4, 6, 100} {
		l = append(l, time.Duration(ms)*time.Millisecond)
	}
	if p50, p99, p100 := l.Percentile(0.5), l.Percentile(0.99), l.Percentile(1); p50 != 5*time.Millisecond || p99 != 9*time.Millisecond || p100 != 100*time.Millisecond {
		t.Errorf("p50 %v, p99 %v, p100 %v; want 5ms, 9ms (nearest rank below), 100ms", p50, p99, p100)
	}
}

func TestSpec(t *testing.T) {
	base := policytest.Container("c1", 1500)
	s := base.Guaranteed().In("prod").OfPod("web").Named("nginx").Limited(2000).With("a", "1").Label("l", "2").Holding("dra.x", "u1", "u2")
	req := s.Request()
	if p, c := req.Pod, req.Container; p.Id != "web" || p.Uid != "uid-web" || p.Namespace != "prod" || p.Annotations["a"] != "1" || p.Labels["l"] != "2" ||
		c.Name != "nginx" || c.QosClass != abi.QOSClass_QOS_CLASS_GUARANTEED || c.Resources.CpuLimitMilli != 2000 || len(c.CdiDevices) != 2 ||
		c.CdiDevices[1] != abi.CDIDeviceName("dra.x", "u2", 0) {
		t.Errorf("request %v", req)
	}
	if base.With("b", "2"); base.Annotations != nil {
		t.Error("With changed the spec it was called on")
	}
	if r := base.Request(); r.Pod.Id != "pod-c1" || r.Container.Name != "c" || r.Container.QosClass != abi.QOSClass_QOS_CLASS_BURSTABLE {
		t.Errorf("defaults %v", r)
	}
}

// TestBuilds: Transports are the native build, then the .wasm's stand-in;
// Agree runs every scenario on every machine through Tee, the calls counted.
func TestBuilds(t *testing.T) {
	b := policytest.Builds{
		New:  func() policy.Policy { return &toy{} },
		Wasm: func(tb testing.TB) abi.Transport { return toyRunner(tb, &toy{}) },
	}
	if trs := b.Transports(); len(trs) != 2 || trs[0].Name != "native" || trs[1].Name != "wasm" {
		t.Fatalf("Transports = %v", trs)
	}
	type opener func(tb testing.TB, machine string) *policytest.Runtime
	tee := func(calls *int) opener {
		return func(tb testing.TB, machine string) *policytest.Runtime {
			rt, err := policytest.Open(tb, b.Tee(tb, calls), &abi.InitRequest{Topology: policytest.Machine(tb, machine)})
			if err != nil {
				tb.Fatal(err)
			}
			return rt
		}
	}
	var ran []string
	create := func(t *testing.T, open opener, machine string) {
		ran = append(ran, machine)
		open(t, machine).Create(policytest.Container("b", 100))
	}
	policytest.Agree(t, []string{"Desktop1Socket", "N4C16"}, []policytest.Scenario[opener]{{Name: "create", Run: create}}, 2, tee)
	if !slices.Equal(ran, []string{"Desktop1Socket", "N4C16"}) {
		t.Errorf("the scenario ran on %v", ran)
	}
	for _, m := range policytest.VariedMachines {
		if !slices.Contains(policytest.MachineNames(), m) {
			t.Errorf("VariedMachines names %s, not a fixture machine", m)
		}
	}
}

// TestSelfBuilds: both of SelfBuilds' builds are fresh instances of the Go
// build, so a Tee over them compares two instances.
func TestSelfBuilds(t *testing.T) {
	made := 0
	b := policytest.SelfBuilds(func() policy.Policy { made++; return &toy{} })
	calls := 0
	rt, err := policytest.Open(t, b.Tee(t, &calls), &abi.InitRequest{Topology: policytest.Machine(t, "N4C16")})
	if err != nil {
		t.Fatal(err)
	}
	rt.Create(policytest.Container("b", 100))
	if made != 2 || calls < 2 {
		t.Errorf("%d instances made, %d calls compared; want 2 instances and every call compared", made, calls)
	}
}

// TestOpenOnMachine: the instance is initialised on the fixture machine as
// node n1, with the configuration and the restore state given.
func TestOpenOnMachine(t *testing.T) {
	var got *abi.InitRequest
	rec := recordingTransport{Transport: toyRunner(t, &toy{}), init: &got}
	restore := &abi.RestoreState{Pods: []*abi.PodSandbox{{Id: "p1"}}}
	if _, err := policytest.OpenOnMachine(t, rec, "N4C16", "cfg: 1", restore); err != nil {
		t.Fatal(err)
	}
	if got.GetNodeName() != "n1" || string(got.GetConfig()) != "cfg: 1" || len(got.GetTopology().GetCpus()) != 16 || len(got.GetRestore().GetPods()) != 1 {
		t.Errorf("Init request %v; want node n1, the configuration, N4C16's 16 CPUs and the restore state", got)
	}
}

// recordingTransport keeps the Init request it passes on.
type recordingTransport struct {
	abi.Transport
	init **abi.InitRequest
}

func (r recordingTransport) Call(ctx context.Context, method abi.Method, req abi.Message) (*abi.Response, error) {
	if init, ok := req.(*abi.InitRequest); ok {
		*r.init = init
	}
	return r.Transport.Call(ctx, method, req)
}
