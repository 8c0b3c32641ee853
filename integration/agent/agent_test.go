//go:build integration

package agent_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/integration/agent"
	"github.com/nriwasm/nriwasm/integration/containerd"
)

// The workloads, one container per pod, as kubelet would run them.
var (
	guaranteed  = workload{pod: "guaranteed", qos: containerd.Guaranteed, requestMilli: 1000, limitMilli: 1000}
	system      = workload{pod: "system", namespace: "kube-system", qos: containerd.BestEffort}
	burstable   = workload{pod: "burstable", qos: containerd.Burstable, requestMilli: 500, limitMilli: 1000}
	bestEffort  = workload{pod: "besteffort", qos: containerd.BestEffort}
	burstable2  = workload{pod: "burstable2", qos: containerd.Burstable, requestMilli: 250}
	guaranteed2 = workload{pod: "guaranteed2", qos: containerd.Guaranteed, requestMilli: 1000, limitMilli: 1000}
)

// placeQoSClasses runs every QoS class under the topology-aware policy and
// checks each container's real cpuset and affinity against the policy's
// decision. The reserved CPUs (750m by default) cannot hold an exclusive
// CPU next to shared containers on a 2-CPU node, so it goes in two phases:
//
//  1. a Guaranteed 1-CPU container (exclusive CPUs) and a kube-system one
//     (the reserved CPUs);
//  2. the Guaranteed one removed, a Burstable and a BestEffort one (the
//     shared CPUs).
//
// On 2 CPUs: Guaranteed on CPU 1 alone, kube-system on CPU 0, then
// Burstable and BestEffort on CPU 1; without the agent every one would run
// on 0-1.
func placeQoSClasses(t *testing.T, e *env) map[string]placement {
	t.Helper()
	e.run(t, guaranteed)
	e.run(t, system)
	got, want := e.check(t)
	g := want[guaranteed.key()]
	if g.Refused != "" {
		t.Fatalf("the policy refused the Guaranteed container: %s", g.Refused)
	}
	if set := cpuset.MustParse(g.CPUs); set.Size() != 1 {
		t.Fatalf("the Guaranteed 1-CPU container got cpus %q, want 1 exclusive CPU", g.CPUs)
	}
	for key, p := range got {
		if key != guaranteed.key() && overlap(p.cpuset, got[guaranteed.key()].cpuset) {
			t.Errorf("%s runs on %q, overlapping the Guaranteed container's exclusive %q", key, p.cpuset, g.CPUs)
		}
	}

	e.remove(t, guaranteed)
	e.run(t, burstable)
	e.run(t, bestEffort)
	got, want = e.check(t)
	reserved := got[system.key()].cpuset
	if sameCPUs(reserved, e.online) {
		t.Fatalf("the kube-system container runs on every online CPU (%q): not on the reserved ones", reserved)
	}
	for _, w := range []workload{burstable, bestEffort} {
		if d := want[w.key()]; d.Refused != "" {
			t.Fatalf("the policy refused %s: %s", w.key(), d.Refused)
		}
		if p := got[w.key()]; overlap(p.cpuset, reserved) {
			t.Errorf("%s runs on %q, overlapping the reserved CPUs %q", w.key(), p.cpuset, reserved)
		}
	}
	return got
}

// moreContainers runs a Burstable and then a Guaranteed container after a
// restart and checks them against the policy's decisions for the whole,
// uninterrupted history: the restarted policy knows every earlier
// assignment. On 2 CPUs the Burstable one shares CPU 1 and the Guaranteed
// one does not fit (the shared CPUs are in use), so the policy refuses it
// and the agent starts it unpinned (fail-open).
func moreContainers(t *testing.T, e *env) {
	t.Helper()
	e.run(t, burstable2)
	e.run(t, guaranteed2)
	_, want := e.check(t)
	refused := 0
	for _, d := range want {
		if d.Refused != "" {
			refused++
		}
	}
	if got := e.metrics(t).Sum("nriwasm_fail_open_total"); got != float64(refused) {
		t.Errorf("nriwasm_fail_open_total = %v, want %d (the containers the policy refused)", got, refused)
	}
}

// TestAgentPlacesQoSClasses runs the agent with the default topology-aware
// policy against a real containerd and checks that every container's real
// cgroup cpuset.cpus and Cpus_allowed_list equal the policy's decision, as
// the agent journaled it and as `nriwasm simulate` computes it on this
// node: a Guaranteed 1-CPU container alone on its CPU, kube-system on the
// reserved CPUs, Burstable and BestEffort on the shared ones.
func TestAgentPlacesQoSClasses(t *testing.T) {
	e := newEnv(t, "")
	logRSS(t, e.a, "after ready, topology-aware, no containers")
	placeQoSClasses(t, e)
	m := e.metrics(t)
	if got := m.Sum("nriwasm_managed_containers"); got != float64(len(e.ids)) {
		t.Errorf("nriwasm_managed_containers = %v, want %d", got, len(e.ids))
	}
	if got := m.Sum("nriwasm_fail_open_total"); got != 0 {
		t.Errorf("nriwasm_fail_open_total = %v, want 0", got)
	}
	logRSS(t, e.a, "topology-aware, 3 containers placed")
}

// TestAgentSurvivesContainerdRestart restarts containerd under the running
// agent: the agent loses its connection, reconnects, is synchronized with
// the surviving containers and reshuffles nothing; new containers are
// placed as if nothing had happened.
func TestAgentSurvivesContainerdRestart(t *testing.T) {
	e := newEnv(t, "")
	before := placeQoSClasses(t, e)
	m := e.metrics(t)
	conn0 := m.Sum("nriwasm_nri_connections_total", "result", "connected")
	sync0 := m.Sum("nriwasm_policy_call_duration_seconds_count", "method", "Synchronize")

	e.c.Restart(t)
	e.a.Eventually(t, checkTimeout, func() string {
		m, err := e.a.Metrics(e.ctx)
		if err != nil {
			return err.Error()
		}
		lost := m.Sum("nriwasm_nri_connections_total", "result", "lost")
		conn := m.Sum("nriwasm_nri_connections_total", "result", "connected")
		syncs := m.Sum("nriwasm_policy_call_duration_seconds_count", "method", "Synchronize")
		if lost < 1 || conn < conn0+1 || syncs < sync0+1 {
			return fmt.Sprintf("waiting for the agent to reconnect and resync: connections lost %v, connected %v (%v before), Synchronize calls %v (%v before)",
				lost, conn, conn0, syncs, sync0)
		}
		return ""
	})
	if err := e.a.Ready(e.ctx); err != nil {
		t.Error(err)
	}
	assertResync(t, e, 2)
	e.unchanged(t, before, "after containerd's restart")
	moreContainers(t, e)
}

// TestAgentKillKeepsCheckpoint SIGKILLs the agent with containers placed
// and starts it again on the same state directory: its checkpoint restores
// every assignment, nothing is reshuffled, and new containers are placed as
// if the agent had never stopped.
func TestAgentKillKeepsCheckpoint(t *testing.T) {
	e := newEnv(t, "")
	before := placeQoSClasses(t, e) // the checkpoint holds every assignment by now
	waitCompiled(t, e)              // the restart's figure is a warm cache's
	e.a.Kill(t)
	e.a.Restart(t)
	t.Logf("FIGURE agent start-to-ready after SIGKILL, warm compilation cache, %d containers: %v", len(e.ids), e.a.ReadyAfter)
	if lines := logLines(e.a, `msg="journal restored"`); len(lines) != 1 || !strings.Contains(lines[0], fmt.Sprintf(" containers=%d ", len(e.ids))) {
		t.Errorf("the restarted agent did not restore %d containers from its checkpoint: %q", len(e.ids), lines)
	}
	assertResync(t, e, 1)
	e.unchanged(t, before, "after the agent's SIGKILL and restart")
	moreContainers(t, e)
}

// assertResync waits for the n-th Synchronize of the agent's current start
// and checks the last one: every journaled container still runs (none forgotten) and
// the policy moved none.
func assertResync(t *testing.T, e *env, n int) {
	t.Helper()
	var lines []string
	e.a.Eventually(t, checkTimeout, func() string {
		if lines = logLines(e.a, "msg=synchronized"); len(lines) < n {
			return fmt.Sprintf("waiting for Synchronize #%d in the agent's log, have %q", n, lines)
		}
		return ""
	})
	want := fmt.Sprintf("containers=%d forgotten=0 updates=0", len(e.ids))
	if last := lines[len(lines)-1]; !strings.Contains(last, want) {
		t.Errorf("the agent's last Synchronize: %q, want %q", last, want)
	}
}

// cpusetAnnotation makes the conformance policy answer that cpuset
// (sdk/go/conformance.CPUSetAnnotation).
const cpusetAnnotation = "conformance.nriwasm.io/cpuset"

// TestAgentPolicyTrapLosesNothing runs the conformance policy, which panics
// (a Wasm trap) on a container named "panic": the agent discards the
// instance, rebuilds it from the journal, retries once (trapping again),
// and, fail-open by default, starts the container unpinned. The containers
// placed before keep their allocation, in the cgroups and the checkpoint,
// and the rebuilt instance places the next container.
func TestAgentPolicyTrapLosesNothing(t *testing.T) {
	e := newEnv(t, "conformance")
	cpus := cpuset.MustParse(e.online).Sorted()
	first, last := fmt.Sprint(cpus[0]), fmt.Sprint(cpus[len(cpus)-1])
	pinned := func(name, cpu string) workload {
		return workload{pod: name, container: name, qos: containerd.Burstable, requestMilli: 100,
			annotations: map[string]string{cpusetAnnotation: cpu}}
	}
	e.run(t, pinned("a", last))
	e.run(t, pinned("b", first))
	before, _ := e.check(t)
	m0 := e.metrics(t)

	panicking := workload{pod: "panic", container: "panic", qos: containerd.Burstable, requestMilli: 100}
	e.run(t, panicking) // fail-open: CRI creates and starts it
	_, want := e.check(t)
	if want[panicking.key()].Refused == "" {
		t.Fatalf("the simulated policy did not fail on the container named panic: %+v", want[panicking.key()])
	}
	e.unchanged(t, before, "after the policy trapped")
	m := e.metrics(t)
	for _, c := range []struct {
		name   string
		labels []string
		min    float64
	}{
		{"nriwasm_policy_call_errors_total", []string{"method", "CreateContainer", "kind", "trap"}, 1},
		{"nriwasm_policy_instance_rebuilds_total", nil, 1},
		{"nriwasm_fail_open_total", nil, 1},
	} {
		if d := m.Sum(c.name, c.labels...) - m0.Sum(c.name, c.labels...); d < c.min {
			t.Errorf("%s%v rose by %v, want at least %v", c.name, c.labels, d, c.min)
		}
	}
	if d := m.Sum("nriwasm_fail_open_total") - m0.Sum("nriwasm_fail_open_total"); d != 1 {
		t.Errorf("nriwasm_fail_open_total rose by %v, want 1", d)
	}
	for _, s := range []string{"retrying once on a rebuilt instance", "POLICY FAILED"} {
		if e.a.LogCount(s) == 0 {
			t.Errorf("the agent's log has no %q", s)
		}
	}
	if err := e.a.Ready(e.ctx); err != nil {
		t.Error(err)
	}

	e.run(t, pinned("c", last))
	e.check(t)
	e.unchanged(t, before, "after the next container")
}

// steadyAfter is how long after ready the startup figures read the agent's
// steady RSS: the load's garbage is returned to the OS in the background.
const steadyAfter = 5 * time.Second

// TestAgentStartupFigures measures, without asserting, the agent's start to
// ready and its resident memory with the topology-aware policy: one start
// with a cold compilation cache, then warm starts on the same state
// directory (SIGTERM in between).
func TestAgentStartupFigures(t *testing.T) {
	e := newEnv(t, "")
	logRSS(t, e.a, "after a cold start (on the interpreter while the child compiles)")
	// A restart before the child's compile lands would start on the
	// interpreter again: the warm starts need the compiled code in the cache.
	waitCompiled(t, e)
	logRSS(t, e.a, "after a cold start and the move to compiled code")
	var warm []time.Duration
	var rss []float64
	for range 5 {
		e.a.Stop(t)
		e.a.Restart(t)
		warm = append(warm, e.a.ReadyAfter)
		r, err := e.a.RSS()
		if err != nil {
			t.Fatal(err)
		}
		rss = append(rss, float64(r)/(1<<20))
	}
	t.Logf("FIGURE agent start-to-ready, warm compilation cache: %v (median %v)", warm, median(warm))
	t.Logf("FIGURE agent RSS after a warm start: %.1f MiB (median %.1f)", rss, median(rss))
	// The load's garbage goes back to the OS in the background once the
	// agent is ready: the steady figure is read when that has had its time.
	time.Sleep(steadyAfter)
	logRSS(t, e.a, fmt.Sprintf("%v after the last warm start (steady)", steadyAfter))
	// The executable's start-up pages were released once ready: what the
	// agent maps again when it works, and what its first decisions cost.
	e.run(t, burstable)
	e.run(t, bestEffort)
	m := e.metrics(t)
	calls := m.Sum("nriwasm_policy_call_duration_seconds_count", "method", "CreateContainer")
	took := time.Duration(m.Sum("nriwasm_policy_call_duration_seconds_sum", "method", "CreateContainer") * float64(time.Second))
	t.Logf("FIGURE agent's first CreateContainer calls after the start: %v calls, %v in all", calls, took)
	time.Sleep(steadyAfter)
	logRSS(t, e.a, fmt.Sprintf("%v after 2 containers were placed (steady)", steadyAfter))
	t.Logf("the last start's log, for where the time goes:\n%s", e.a.StartLog())
}

// TestAgentSeededStartFigures starts the agent on a node that never ran
// topology-aware (an empty state directory) with the built-in policies'
// compiled-code seed the image carries (nriwasm policy precompile): it must
// copy the code from the seed, not compile, and reports start to ready and
// RSS (docs/performance.md, "Footprint").
func TestAgentSeededStartFigures(t *testing.T) {
	seed := filepath.Join(t.TempDir(), "seed")
	if out, err := exec.Command(binary, "policy", "precompile", "--out", seed).CombinedOutput(); err != nil {
		t.Fatalf("nriwasm policy precompile: %v\n%s", err, out)
	}
	e := newEnv(t, "", func(o *agent.Options) {
		o.Config = "policy:\n  name: topology-aware\n  seedDir: " + seed + "\nlog:\n  verbosity: 1\n"
	})
	t.Logf("FIGURE agent start-to-ready, empty cache, compiled-code seed: %v", e.a.ReadyAfter)
	logRSS(t, e.a, "after a seeded start")
	time.Sleep(steadyAfter)
	logRSS(t, e.a, fmt.Sprintf("%v after a seeded start (steady)", steadyAfter))
	if log := e.a.StartLog(); !strings.Contains(log, "source=seed") {
		t.Fatalf("the policy's code did not come from the seed; the start's log:\n%s", log)
	}
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// overlap tells whether two CPU lists share a CPU.
func overlap(a, b string) bool {
	sa, err1 := cpuset.Parse(a)
	sb, err2 := cpuset.Parse(b)
	return err1 == nil && err2 == nil && sa.Intersects(sb)
}

// TestAgentInterpreterFirstStartFigures starts the agent on a node that
// never ran topology-aware and whose image has no compiled-code seed (as for
// a file or OCI policy, or a new version): the policy must start on wazero's
// interpreter while a child process compiles it, place containers there as
// on compiled code (their real cgroups), and move to the compiled code once
// the child is done without moving any container. It reports start to ready
// and how long the move to compiled code took (docs/performance.md).
func TestAgentInterpreterFirstStartFigures(t *testing.T) {
	e := newEnv(t, "", func(o *agent.Options) {
		o.Config = "policy:\n  name: topology-aware\n  seedDir: " + filepath.Join(t.TempDir(), "no-seed") + "\nlog:\n  verbosity: 1\n"
	})
	t.Logf("FIGURE agent start-to-ready, empty cache, no seed (interpreter first): %v", e.a.ReadyAfter)
	if len(logLines(e.a, "starting on the interpreter")) == 0 {
		t.Fatalf("the policy did not start on the interpreter; the start's log:\n%s", e.a.StartLog())
	}
	interpreted := e.metrics(t).Sum("nriwasm_policy_interpreted") == 1
	logRSS(t, e.a, fmt.Sprintf("at ready (on the interpreter: %v)", interpreted))
	before := placeQoSClasses(t, e)
	t.Logf("the containers were placed on the %s", map[bool]string{true: "interpreter", false: "compiled code (the compile was done first)"}[interpreted])
	waitCompiled(t, e)
	if got := e.metrics(t).Sum("nriwasm_policy_compile_failures_total"); got != 0 {
		t.Errorf("nriwasm_policy_compile_failures_total = %v, want 0", got)
	}
	for _, line := range logLines(e.a, "compiled in a child process") {
		t.Logf("FIGURE %s", line)
	}
	for _, line := range logLines(e.a, "moved from the interpreter") {
		t.Logf("FIGURE %s", line)
	}
	e.unchanged(t, before, "after the move to compiled code")
	logRSS(t, e.a, "after the move to compiled code")
	time.Sleep(steadyAfter)
	logRSS(t, e.a, fmt.Sprintf("%v after the move to compiled code (steady)", steadyAfter))
}

// waitCompiled waits until the agent's policy runs compiled code
// (nriwasm_policy_interpreted 0): a first start of a policy in neither cache
// nor seed serves on the interpreter until the child's compile lands.
func waitCompiled(t *testing.T, e *env) {
	t.Helper()
	start := time.Now()
	for e.metrics(t).Sum("nriwasm_policy_interpreted") != 0 {
		if time.Since(start) > 3*time.Minute {
			t.Fatalf("the policy is still on the interpreter 3m later; the log:\n%s", e.a.StartLog())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
