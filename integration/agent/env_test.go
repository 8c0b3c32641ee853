//go:build integration

package agent_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/integration/agent"
	"github.com/nriwasm/nriwasm/integration/containerd"
)

// binary is the nriwasm binary TestMain builds; simCache caches the
// compiled policies of `nriwasm simulate`.
var binary, simCache string

func TestMain(m *testing.M) {
	agent.Main(m, "nriwasm-it-", &binary, func(dir string) error {
		simCache = filepath.Join(dir, "simulate-cache")
		return nil
	}, nil)
}

// checkTimeout bounds every wait for the agent, the runtime and the cgroups
// to agree: generous, for two busy cores.
const checkTimeout = 90 * time.Second

// workload is a pod with one busybox container, described once for CRI
// (as kubelet would run it) and for `nriwasm simulate`.
type workload struct {
	pod       string // pod name; unique in a test
	namespace string // default "default"
	qos       containerd.QOSClass
	container string // default "c"
	// CPU request and limit in milli-CPU, as in the pod spec; kubelet turns
	// them into CPU shares and quota.
	requestMilli, limitMilli int64
	annotations              map[string]string // the container's
}

func (w workload) ns() string   { return cmp.Or(w.namespace, "default") }
func (w workload) name() string { return cmp.Or(w.container, "c") }

// key names the container as the simulation does: namespace/pod/container.
func (w workload) key() string { return w.ns() + "/" + w.pod + "/" + w.name() }

// shares is kubelet's MilliCPUToShares (at least 2; BestEffort gets 2).
func (w workload) shares() int64 { return max(w.requestMilli*1024/1000, 2) }

func (w workload) cri() (containerd.PodOptions, containerd.ContainerOptions) {
	c := containerd.ContainerOptions{Name: w.name(), CPUShares: w.shares(), Annotations: w.annotations}
	if w.limitMilli > 0 {
		c.CPUPeriod = 100000
		c.CPUQuota = w.limitMilli * c.CPUPeriod / 1000
	}
	return containerd.PodOptions{Name: w.pod, Namespace: w.ns(), QOS: w.qos}, c
}

// scenario is the same pod for the simulation, its resources as the agent
// normalizes the CRI ones (docs/agent.md): shares×1000/1024 rounded is the
// request, quota/period the limit.
func (w workload) scenario() *agent.ScenarioPod {
	res := &agent.ScenarioResources{Requests: map[string]string{
		"cpu": fmt.Sprintf("%dm", (w.shares()*1000+512)/1024),
	}}
	if w.limitMilli > 0 {
		res.Limits = map[string]string{"cpu": fmt.Sprintf("%dm", w.limitMilli)}
	}
	return &agent.ScenarioPod{
		Name: w.pod, Namespace: w.ns(), QOSClass: string(cmp.Or(w.qos, containerd.Burstable)),
		Containers: []agent.ScenarioContainer{{Name: w.name(), Resources: res, Annotations: w.annotations}},
	}
}

// env is a private containerd with the agent registered as its NRI plugin,
// and the record of what the test ran, replayed through `nriwasm simulate`
// to know what the policy decides.
type env struct {
	ctx    context.Context
	c      *containerd.Containerd
	a      *agent.Agent
	policy string // for the simulation
	online string // the node's online CPUs

	steps []agent.ScenarioStep       // what ran, in order
	pods  map[string]*containerd.Pod // by namespace/pod
	ids   map[string]string          // live containers' ids, by key
}

// newEnv starts containerd, then the agent with policy ("" for the
// default) and its default configuration, and waits until it is ready.
// Cleanup kills the agent, then tears containerd down.
func newEnv(t *testing.T, policy string, opts ...func(*agent.Options)) *env {
	t.Helper()
	online := agent.OnlineCPUs(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	o := agent.Options{Binary: binary, Policy: policy}
	for _, opt := range opts {
		opt(&o)
	}
	n := agent.StartNode(t, containerd.Options{}, o)
	c, a := n.Containerd, n.Agent
	t.Logf("agent ready after %v (cold compilation cache); metrics at %s", a.ReadyAfter, a.MetricsURL)
	return &env{
		ctx: ctx, c: c, a: a, policy: cmp.Or(policy, "topology-aware"), online: online.String(),
		pods: map[string]*containerd.Pod{}, ids: map[string]string{},
	}
}

// run runs the workload's pod (once per pod) and container through CRI.
func (e *env) run(t *testing.T, w workload) string {
	t.Helper()
	po, co := w.cri()
	podKey := w.ns() + "/" + w.pod
	pod := e.pods[podKey]
	if pod == nil {
		var err error
		if pod, err = e.c.RunPodSandbox(e.ctx, po); err != nil {
			t.Fatal(err)
		}
		e.pods[podKey] = pod
	}
	id, err := e.c.RunContainer(e.ctx, pod, co)
	if err != nil {
		t.Fatal(err)
	}
	e.ids[w.key()] = id
	e.steps = append(e.steps, agent.ScenarioStep{Pod: w.scenario()})
	return id
}

// remove stops and removes the workload's container (not its pod).
func (e *env) remove(t *testing.T, w workload) {
	t.Helper()
	id := e.ids[w.key()]
	if err := e.c.StopContainer(e.ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.c.RemoveContainer(e.ctx, id); err != nil {
		t.Fatal(err)
	}
	delete(e.ids, w.key())
	e.steps = append(e.steps, agent.ScenarioStep{Remove: w.pod + "/" + w.name()})
}

// decisions simulates everything run so far with the same policy on this
// node's sysfs: what the policy decides for each live container.
func (e *env) decisions(t *testing.T) map[string]agent.Decision {
	t.Helper()
	sim, err := agent.Simulate(e.ctx, binary, e.policy, "/sys", simCache, agent.Scenario{Steps: e.steps})
	if err != nil {
		t.Fatal(err)
	}
	want := sim.After(-1)
	if got, live := slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(e.ids)); !slices.Equal(got, live) {
		t.Fatalf("the simulation has containers %v, the test runs %v", got, live)
	}
	return want
}

// placement is where a container runs, and what the agent journaled.
type placement struct {
	cpuset, allowed string                   // cgroup cpuset.cpus, Cpus_allowed_list
	assignment      *abi.ContainerAdjustment // from the agent's checkpoint
}

// check waits until, for every live container, the agent's checkpoint holds
// the policy's decision (by simulation) and the container's real cgroup
// cpuset and process affinity equal it — or, for a container whose
// creation the policy refused, no assignment and the node's online CPUs
// (fail-open: started unpinned). It returns the placements and decisions.
func (e *env) check(t *testing.T) (map[string]placement, map[string]agent.Decision) {
	t.Helper()
	want := e.decisions(t)
	var got map[string]placement
	e.a.Eventually(t, checkTimeout, func() string {
		var err error
		if got, err = e.placements(); err != nil {
			return err.Error()
		}
		var bad []string
		for _, key := range slices.Sorted(maps.Keys(want)) {
			d, p := want[key], got[key]
			real := cmp.Or(d.CPUs, e.online) // no cpuset answered: the runtime's default
			if !sameCPUs(p.assignment.GetCpusetCpus(), d.CPUs) || !sameCPUs(p.cpuset, real) || !sameCPUs(p.allowed, real) {
				bad = append(bad, fmt.Sprintf("%s: policy decides cpus %q%s; agent journaled %q; cgroup cpuset.cpus %q, Cpus_allowed_list %q",
					key, d.CPUs, refusal(d), p.assignment.GetCpusetCpus(), p.cpuset, p.allowed))
			}
		}
		if len(bad) > 0 {
			return "placements disagree:\n\t" + strings.Join(bad, "\n\t")
		}
		return ""
	})
	for _, key := range slices.Sorted(maps.Keys(want)) {
		t.Logf("%-40s cpus %-5q %s", key, got[key].cpuset, refusal(want[key]))
	}
	return got, want
}

func refusal(d agent.Decision) string {
	if d.Refused == "" {
		return ""
	}
	return " (refused: " + d.Refused + "; fail-open starts it unpinned)"
}

// placements reads every live container's cgroup, affinity and checkpoint
// entry.
func (e *env) placements() (map[string]placement, error) {
	j, err := e.a.Journal()
	if err != nil {
		return nil, err
	}
	if n := j.Counts().Containers; n != len(e.ids) {
		return nil, fmt.Errorf("the agent's checkpoint holds %d containers, %d are live", n, len(e.ids))
	}
	out := map[string]placement{}
	for key, id := range e.ids {
		c, ok := j.Container(id)
		if !ok {
			return nil, fmt.Errorf("container %s (%s) is not in the agent's checkpoint", key, id)
		}
		cs, al, err := e.c.Affinity(e.ctx, id)
		if err != nil {
			return nil, err
		}
		out[key] = placement{cpuset: cs, allowed: al, assignment: c.GetAssignment()}
	}
	return out, nil
}

// unchanged fails the test unless every container of before has the same
// cgroup cpuset, affinity and journaled assignment now.
func (e *env) unchanged(t *testing.T, before map[string]placement, what string) {
	t.Helper()
	now, err := e.placements()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for key, b := range before {
		n := now[key]
		if n.cpuset != b.cpuset || n.allowed != b.allowed || !n.assignment.EqualVT(b.assignment) {
			t.Errorf("%s: %s was cpuset %q, affinity %q, assignment {%v}; now %q, %q, {%v}",
				what, key, b.cpuset, b.allowed, b.assignment, n.cpuset, n.allowed, n.assignment)
		}
	}
}

// metrics scrapes the agent.
func (e *env) metrics(t *testing.T) agent.Metrics {
	t.Helper()
	m, err := e.a.Metrics(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// logLines returns the lines of the agent's current start's log that
// contain s.
func logLines(a *agent.Agent, s string) []string {
	var lines []string
	for line := range strings.SplitSeq(a.StartLog(), "\n") {
		if strings.Contains(line, s) {
			lines = append(lines, line)
		}
	}
	return lines
}

func sameCPUs(a, b string) bool {
	sa, err1 := cpuset.Parse(a)
	sb, err2 := cpuset.Parse(b)
	return err1 == nil && err2 == nil && sa.Equal(sb)
}

// logRSS logs the agent's resident memory: the measure of docs (not
// asserted).
func logRSS(t *testing.T, a *agent.Agent, when string) {
	t.Helper()
	logMemory(t, a.PID(), "agent RSS "+when)
}

// logMemory logs process pid's resident memory, of it anonymous and
// file-backed, as a FIGURE line (not asserted).
func logMemory(t *testing.T, pid int, what string) {
	t.Helper()
	var mib [3]float64
	for i, f := range []string{"VmRSS", "RssAnon", "RssFile"} {
		b, err := agent.ProcStatus(pid, f)
		if err != nil {
			t.Fatal(err)
		}
		mib[i] = float64(b) / (1 << 20)
	}
	t.Logf("FIGURE %s: %.1f MiB (anonymous %.1f, file %.1f)", what, mib[0], mib[1], mib[2])
}
