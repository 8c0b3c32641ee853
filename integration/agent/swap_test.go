//go:build integration

package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/integration/agent"
	"github.com/nriwasm/nriwasm/integration/containerd"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// swapTimeout bounds a swap: it may compile the new module (cold, on two
// busy cores, a minute or more).
const swapTimeout = 5 * time.Minute

// TestAgentSwapsPolicyLive changes the policy of a running agent, with
// running containers, through its configuration file (docs/rollout.md,
// "Swap"):
//
//   - to the conformance policy with a configuration that asks for DRA: the
//     swap is refused (DRA is started with the agent; restart required), the
//     topology-aware policy stays and still places new containers;
//   - to topology-aware from a .wasm file with another policy.memoryLimit
//     (both needed a restart before): the swap is accepted, the new policy
//     is recorded next to the checkpoint, it places new containers, and no
//     running container's real cgroup cpuset or affinity changes.
func TestAgentSwapsPolicyLive(t *testing.T) {
	const first = "policy:\n  name: topology-aware\n"
	e := newEnv(t, "", func(o *agent.Options) { o.Config = first })
	ws := []workload{
		{pod: "burstable", qos: containerd.Burstable, requestMilli: 100},
		{pod: "limited", qos: containerd.Burstable, requestMilli: 200, limitMilli: 400},
		{pod: "besteffort", qos: containerd.BestEffort},
	}
	for _, w := range ws {
		e.run(t, w)
	}
	before := e.settled(t)

	// Refused: the new policy would turn DRA on.
	if err := e.a.WriteConfig("policy:\n  name: conformance\n  config: dra\n"); err != nil {
		t.Fatal(err)
	}
	e.a.Eventually(t, swapTimeout, func() string {
		if n := e.metrics(t).Sum("nriwasm_policy_swaps_total", "result", "restart_required"); n != 1 {
			return fmt.Sprintf("nriwasm_policy_swaps_total{result=\"restart_required\"} %v, want 1", n)
		}
		return ""
	})
	if lines := logLines(e.a, "policy swap refused"); len(lines) != 1 || !strings.Contains(lines[0], "turns DRA on") {
		t.Fatalf("refusal logged as %q", lines)
	}
	e.unchanged(t, before, "after the refused swap")
	if rec, ok := resmgr.RecordedIdentity(e.a.StateDir); !ok || rec.Name != "topology-aware" {
		t.Fatalf("recorded policy %+v (%v), want topology-aware", rec, ok)
	}
	// topology-aware still serves: a new container is pinned (conformance
	// would start it unpinned, without the cpuset annotation).
	e.run(t, workload{pod: "after-refusal", qos: containerd.Burstable, requestMilli: 100})
	before = e.settled(t)

	// Accepted: the same policy from a file, with a larger memory cap.
	module, _ := builtin.Module("topology-aware")
	path := filepath.Join(t.TempDir(), "topology-aware.wasm")
	if err := os.WriteFile(path, module, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.a.WriteConfig(fmt.Sprintf("policy:\n  name: %s\n  memoryLimit: 512Mi\n", path)); err != nil {
		t.Fatal(err)
	}
	e.a.Eventually(t, swapTimeout, func() string {
		if n := e.metrics(t).Sum("nriwasm_policy_swaps_total", "result", "accepted"); n != 1 {
			return fmt.Sprintf("nriwasm_policy_swaps_total{result=\"accepted\"} %v, want 1", n)
		}
		return ""
	})
	e.unchanged(t, before, "after the accepted swap")
	for _, line := range logLines(e.a, "policy swapped") {
		t.Logf("FIGURE %s", line) // how long the swap took ("took")
	}
	if rec, ok := resmgr.RecordedIdentity(e.a.StateDir); !ok || rec.Reference != path {
		t.Fatalf("recorded policy %+v (%v), want %s", rec, ok, path)
	}
	e.run(t, workload{pod: "after-swap", qos: containerd.Burstable, requestMilli: 100})
	e.settled(t)
	if n := e.metrics(t).Sum("nriwasm_fail_open_total"); n != 0 {
		t.Fatalf("%v containers started unpinned", n)
	}
}

// settled waits until every live container is journaled with a cpuset and
// its real cgroup cpuset and affinity equal it, and returns the placements.
func (e *env) settled(t *testing.T) map[string]placement {
	t.Helper()
	var got map[string]placement
	e.a.Eventually(t, checkTimeout, func() string {
		var err error
		if got, err = e.placements(); err != nil {
			return err.Error()
		}
		for key, p := range got {
			cpus := p.assignment.GetCpusetCpus()
			if cpus == "" || !sameCPUs(p.cpuset, cpus) || !sameCPUs(p.allowed, cpus) {
				return fmt.Sprintf("%s: journaled cpus %q; cgroup cpuset.cpus %q, Cpus_allowed_list %q", key, cpus, p.cpuset, p.allowed)
			}
		}
		return ""
	})
	for key, p := range got {
		t.Logf("%-40s cpus %q", key, p.cpuset)
	}
	return got
}
