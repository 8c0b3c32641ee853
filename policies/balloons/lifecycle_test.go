package balloons_test

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestMatchExpressions: each operator and key, in list order.
func TestMatchExpressions(t *testing.T) {
	h := mustOpen(t, nativeOpen, "Desktop1Socket", `
preserve:
  matchExpressions: [{key: name, operator: In, values: [debugger]}]
balloonTypes:
- name: eq
  matchExpressions: [{key: pod/labels/app, operator: Equals, values: [db]}]
- name: glob
  matchExpressions: [{key: pod/name, operator: Matches, values: ["web-*"]}]
- name: any
  matchExpressions: [{key: namespace, operator: MatchesAny, values: ["x-*", "y-*"]}]
- name: qos
  matchExpressions: [{key: qosclass, operator: In, values: [Guaranteed]}]
- name: exists
  matchExpressions: [{key: labels/gpu, operator: Exists}]
- name: notin
  matchExpressions: [{key: pod/labels/tier, operator: NotIn, values: [low]}, {key: pod/uid, operator: NotExist}]
`)
	g := ctr("g", 1000)
	g.QOS = abi.QOSClass_QOS_CLASS_GUARANTEED
	for _, tc := range []struct {
		s    spec
		want string
	}{
		{ctr("a", 100).Label("app", "db"), "eq[0]"},
		{ctr("b", 100).OfPod("web-1"), "glob[0]"},
		{ctr("c", 100).In("y-prod"), "any[0]"},
		{g.Label("tier", "low"), "qos[0]"},
		{ctr("e", 100).Label("tier", "high"), "notin[0]"},
		{ctr("f", 100).Label("tier", "low"), "default[0]"},
		{ctr("dbg", 100).Named("debugger").Label("tier", "low"), ""},
	} {
		h.Create(tc.s)
		if got := h.balloonOf(tc.s.ID); got != tc.want {
			t.Errorf("%s: in %q, want %q", tc.s.ID, got, tc.want)
		}
	}
	if a := h.Containers["dbg"].Assignment; a.CpusetCpus != "" {
		t.Errorf("preserve: debugger got %q", a.CpusetCpus)
	}
}

// TestSynchronize: containers the runtime no longer runs are forgotten
// (their balloons deflate), unknown ones are placed and told by updates.
func TestSynchronize(t *testing.T) {
	h := mustOpen(t, nativeOpen, "Server2Socket4NodesInterleaved", "balloonTypes:\n- name: app\n  namespaces: [app]\n")
	h.Create(ctr("a", 1500).In("app"))
	h.Create(ctr("b", 1500).In("app"))
	stop, err := h.Client.StopContainer(context.Background(), &abi.StopContainerRequest{Container: h.Containers["b"]})
	if err != nil {
		t.Fatal(err)
	}
	delete(h.Containers, "b")
	h.Apply(stop.Updates)
	h.check()
	fresh := ctr("c", 2500).In("app").Request()
	req := &abi.SynchronizeRequest{
		Pods:       []*abi.PodSandbox{h.Pods["pod-a"], fresh.Pod},
		Containers: []*abi.Container{h.Containers["a"], fresh.Container},
	}
	resp, err := h.Client.Synchronize(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	fresh.Container.Assignment = &abi.ContainerAdjustment{}
	h.Containers["c"], h.Pods[fresh.Pod.Id] = fresh.Container, fresh.Pod
	h.Apply(resp.Updates)
	h.check()
	if h.Containers["c"].Assignment.CpusetCpus == "" || h.balloonOf("c") != "app[0]" {
		t.Errorf("synchronized c: %v in %q", h.Containers["c"].Assignment, h.balloonOf("c"))
	}
	if n := policytest.MustSet(t, h.balloon("app[0]").CPUs).Size(); n != 4 {
		t.Errorf("app[0] has %d CPUs for 4000m", n)
	}
	// A repeated Allocate answers the same; other results are refused.
	h2 := mustOpen(t, nativeOpen, "Desktop1Socket", draConfig)
	first, err := h2.allocate(claimFor("u", "dedicated-0"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := h2.Client.Allocate(context.Background(), &abi.AllocateRequest{Claim: claimFor("u", "dedicated-0")})
	if err != nil || !again.EqualVT(first) {
		t.Errorf("repeated Allocate = %v, %v; want %v", again, err, first)
	}
	_, err = h2.Client.Allocate(context.Background(), &abi.AllocateRequest{Claim: claimFor("u", "dedicated-1")})
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "claim.results")
}
