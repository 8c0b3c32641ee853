package nri_test

import (
	"testing"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
)

// TestPolicyFailure: the conformance policy panics on a container named
// "panic". The call is retried once on a rebuilt instance (which panics
// again); then fail-open starts the container unpinned and fail-closed fails
// its creation. Either way the next container is served by a new instance.
func TestPolicyFailure(t *testing.T) {
	tests := []struct {
		onFailure config.FailurePolicy
		wantErr   bool
	}{
		{config.FailOpen, false},
		{config.FailClosed, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.onFailure), func(t *testing.T) {
			rt := newRuntime(t)
			rt.start()
			a := startAgent(t, rt, agentOpts{policy: "conformance", onFailure: tt.onFailure})
			rt.waitSync()
			p := pod("p", "burstable")
			if err := rt.runPod(p); err != nil {
				t.Fatal(err)
			}
			c := ctr(p, "panic", 500, 0, 0)
			c.Annotations = map[string]string{conformance.CPUSetAnnotation: "0-3"}
			resp, err := rt.create(p, c)
			require(t, err != nil, tt.wantErr, "creation failed")
			if err == nil {
				require(t, resp.GetAdjust().GetLinux().GetResources().GetCpu().GetCpus(), "", "cpus of an unpinned container")
				require(t, a.assignment(t, c.Id) == nil, true, "journaled without assignment")
			}
			trapped := a.counter(t, "nriwasm_policy_call_errors_total", map[string]string{"method": "CreateContainer", "kind": "trap"})
			require(t, trapped, 1.0, "CreateContainer calls failed by a trap (after the retry)")
			require(t, a.counter(t, "nriwasm_policy_instance_rebuilds_total", nil), 1.0, "rebuilds for the retry")
			wantOpen := 0.0
			if !tt.wantErr {
				wantOpen = 1
			}
			require(t, a.counter(t, "nriwasm_fail_open_total", nil), wantOpen, "fail-open count")

			ok := ctr(p, "ok", 500, 0, 0)
			ok.Annotations = map[string]string{conformance.CPUSetAnnotation: "4-5"}
			resp, err = rt.create(p, ok)
			if err != nil {
				t.Fatal(err)
			}
			require(t, resp.GetAdjust().GetLinux().GetResources().GetCpu().GetCpus(), "4-5", "cpus after the rebuild")
			require(t, a.counter(t, "nriwasm_policy_instance_rebuilds_total", nil), 2.0, "rebuilds")
		})
	}
}

// TestRefusedAnswer: an answer out of bounds (a CPU the node does not have) is
// refused whole and counts as a policy failure.
func TestRefusedAnswer(t *testing.T) {
	rt := newRuntime(t)
	rt.start()
	a := startAgent(t, rt, agentOpts{policy: "conformance", onFailure: config.FailClosed})
	rt.waitSync()
	p := pod("p", "burstable")
	if err := rt.runPod(p); err != nil {
		t.Fatal(err)
	}
	c := ctr(p, "c", 500, 0, 0)
	c.Annotations = map[string]string{conformance.CPUSetAnnotation: "0-500"}
	if _, err := rt.create(p, c); err == nil {
		t.Fatal("an answer with CPUs the node lacks was applied")
	}
	require(t, a.counter(t, "nriwasm_policy_answers_refused_total", map[string]string{"field": "adjustment.cpuset_cpus"}), 1.0, "refused answers")
}
