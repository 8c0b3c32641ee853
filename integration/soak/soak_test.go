//go:build integration

// Package soak runs the agent (`nriwasm run`, a separate process) against a
// real containerd and runc for a while under random pod churn of every QoS
// class, SIGKILLs of the agent, containerd restarts and live configuration
// changes, and after every step checks the real cgroups against the agent's
// journal and containerd's record. The policy is topology-aware with faults
// (testdata/trapping): pods of some names make it trap. `make soak` runs it;
// SOAK_DURATION sets how long (default 10m).
package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/integration/agent"
	"github.com/nriwasm/nriwasm/integration/containerd"
	"github.com/nriwasm/nriwasm/integration/kubeapi"
)

// binary is the nriwasm binary; trapping the policy module with faults.
var binary, trapping string

func TestMain(m *testing.M) {
	agent.Main(m, "nriwasm-soak-", &binary, func(dir string) error {
		// Named like the policy it wraps: the agent names the policy, and its
		// DRA driver, after the file.
		if err := os.Mkdir(filepath.Join(dir, "trapping"), 0o755); err != nil {
			return err
		}
		trapping = filepath.Join(dir, "trapping", "topology-aware.wasm")
		build := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", trapping, "./testdata/trapping")
		build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("building the trapping policy: %w\n%s", err, out)
		}
		return nil
	}, kubeapi.Main) // kubeapi.Main stops the API server of the DRA part, if it started
}

// settle bounds how long the cgroups may take to agree after a step.
const settle = 30 * time.Second

// config is the agent's configuration with the topology-aware policy's
// reserved CPUs, and DRA on with the DRA part.
func (s *soak) config(reserved string) string {
	c := "policy:\n  name: topology-aware\n  config:\n    reservedResources:\n      cpu: \"cpuset:" + reserved + "\"\n"
	if s.dra != nil {
		c += policyConfig + s.dra.config()
	}
	return c
}

// live is a container the soak runs.
type live struct {
	pod *containerd.Pod
	qos containerd.QOSClass
}

type soak struct {
	t      *testing.T
	ctx    context.Context
	rng    *rand.Rand
	c      *containerd.Containerd
	a      *agent.Agent
	online cpuset.Set
	cpus   []int
	ctrs   map[string]live // by container id
	n      int             // pods created
	dra    *draSoak        // nil with SOAK_DRA=0

	events, faults, checks, violations int
	traps                              map[string]int // pods made to trap, by kind
	reconnects                         []time.Duration
	reserved                           int
}

// TestSoak runs the soak for SOAK_DURATION (default 10m) and fails on any
// violation.
func TestSoak(t *testing.T) {
	d := 10 * time.Minute
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("SOAK_DURATION=%q: %v", v, err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("soak: %v, seed %d", d, seed)
	online := agent.OnlineCPUs(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), d+10*time.Minute)
	defer cancel()
	s := &soak{t: t, ctx: ctx, rng: rand.New(rand.NewPCG(seed, seed)), online: online, ctrs: map[string]live{}, traps: map[string]int{}}
	for _, c := range online.Sorted() {
		s.cpus = append(s.cpus, int(c))
	}
	opts := containerd.Options{}
	if os.Getenv("SOAK_DRA") != "0" {
		s.dra = newDRASoak(s)
		opts = s.dra.containerdOptions()
	}
	n := agent.StartNode(t, opts, agent.Options{Binary: binary, Policy: trapping, Config: s.config(fmt.Sprint(s.cpus[0]))})
	s.c, s.a = n.Containerd, n.Agent
	if s.dra != nil {
		s.dra.register(s)
		s.dra.waitForSlices(s)
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) && !t.Failed() {
		s.step()
		s.check()
	}
	t.Logf("FIGURE soak %v on %d CPUs (cgroup v2: %v): %d events, %d faults injected, %d checks, %d violations",
		d, online.Size(), containerd.CgroupV2(), s.events, s.faults, s.checks, s.violations)
	log := s.a.Log()
	trapped, rebuilt := strings.Count(log, "trapping: fault injected"), strings.Count(log, "policy instance rebuilt")
	t.Logf("FIGURE soak pods whose calls trap: %d trapone (retried on a rebuilt instance), %d trapall (fail-open); %d traps, %d instances rebuilt",
		s.traps["trapone"], s.traps["trapall"], trapped, rebuilt)
	if s.traps["trapone"]+s.traps["trapall"] > 0 && (trapped == 0 || rebuilt == 0) {
		t.Errorf("%d pods were made to trap, but the agent logged %d traps and %d rebuilds", s.traps["trapone"]+s.traps["trapall"], trapped, rebuilt)
	}
	if s.dra != nil {
		t.Logf("FIGURE soak DRA claims: %d prepared, %d unprepared, %d not prepared (no CPU left to claim)", s.dra.prepared, s.dra.unprepared, s.dra.refused)
	}
	t.Logf("FIGURE soak containerd restart to agent reconnected: %v", s.reconnects)
	if s.violations > 0 {
		t.Errorf("%d violations", s.violations)
	}
}

// step does one random thing: mostly pod churn, now and then a fault.
func (s *soak) step() {
	s.events++
	if s.dra != nil && s.rng.IntN(8) == 0 {
		if len(s.dra.claims) > 0 {
			s.dra.unprepare(s)
		} else {
			s.dra.prepare(s)
		}
		return
	}
	switch r := s.rng.IntN(100); {
	case r < 45 || len(s.ctrs) == len(s.claimed()):
		s.runPod()
	case r < 85:
		s.removePod()
	case r < 92:
		s.faults++
		s.a.Kill(s.t)
		s.a.Restart(s.t)
		if s.dra != nil {
			s.dra.register(s)
		}
		s.t.Logf("event %d: agent SIGKILLed and restarted", s.events)
	case r < 96:
		s.faults++
		s.c.Restart(s.t)
		ready := time.Now()
		s.a.Eventually(s.t, settle, func() string {
			m, err := s.a.Metrics(s.ctx)
			if err != nil || m.Sum("nriwasm_nri_connected") != 1 {
				return fmt.Sprintf("waiting for the agent to reconnect (%v)", err)
			}
			return ""
		})
		s.reconnects = append(s.reconnects, time.Since(ready).Round(time.Millisecond))
		s.t.Logf("event %d: containerd restarted; agent reconnected after %v", s.events, s.reconnects[len(s.reconnects)-1])
	default:
		s.faults++
		s.reserved = (s.reserved + 1) % len(s.cpus)
		if err := s.a.WriteConfig(s.config(fmt.Sprint(s.cpus[s.reserved]))); err != nil {
			s.t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // the watcher's debounce and the policy's answer
		s.t.Logf("event %d: reserved CPUs changed live to %d", s.events, s.cpus[s.reserved])
	}
}

var classes = []containerd.QOSClass{containerd.Guaranteed, containerd.Burstable, containerd.BestEffort}

func (s *soak) runPod() {
	s.n++
	qos := classes[s.rng.IntN(len(classes))]
	ns := "default"
	if s.rng.IntN(8) == 0 {
		ns = "kube-system"
	}
	name := fmt.Sprintf("p%d", s.n)
	// 1 in 8 pods make the policy trap: 2 in 3 of those once per call, the
	// others on every call (testdata/trapping).
	if r := s.rng.IntN(24); r < 3 {
		kind := "trapone"
		if r == 2 {
			kind = "trapall"
		}
		s.traps[kind]++
		s.faults++
		name = kind + "-" + name
	}
	pod, err := s.c.RunPodSandbox(s.ctx, containerd.PodOptions{Name: name, Namespace: ns, QOS: qos})
	if err != nil {
		s.t.Fatal(err)
	}
	co := containerd.ContainerOptions{Name: "c", CPUShares: 2}
	switch qos {
	case containerd.Guaranteed:
		co.CPUShares, co.CPUPeriod, co.CPUQuota = 1024, 100000, 100000
	case containerd.Burstable:
		co.CPUShares = int64(102 * (1 + s.rng.IntN(5)))
	}
	id, err := s.c.RunContainer(s.ctx, pod, co)
	if err != nil {
		s.t.Fatal(err)
	}
	s.ctrs[id] = live{pod: pod, qos: qos}
}

// claimed are the containers that use a DRA claim.
func (s *soak) claimed() map[string]*soakClaim {
	if s.dra == nil {
		return nil
	}
	return s.dra.claims
}

// removePod removes a random pod, but none whose container uses a claim:
// those go with their claim (draSoak.unprepare).
func (s *soak) removePod() {
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range s.ctrs {
			if _, ok := s.claimed()[id]; !ok && !yield(id) {
				return
			}
		}
	})
	s.removeContainer(ids[s.rng.IntN(len(ids))])
}

// removeContainer stops and removes container id's pod.
func (s *soak) removeContainer(id string) {
	l := s.ctrs[id]
	if err := s.c.StopPodSandbox(s.ctx, l.pod.ID); err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.RemovePodSandbox(s.ctx, l.pod.ID); err != nil {
		s.t.Fatal(err)
	}
	delete(s.ctrs, id)
}

// check waits until every invariant holds, counting a violation for each
// step after which they do not within settle.
func (s *soak) check() {
	s.checks++
	var last string
	deadline := time.Now().Add(settle)
	for {
		if last = s.verify(); last == "" {
			return
		}
		if time.Now().After(deadline) {
			s.violations++
			s.t.Errorf("event %d: VIOLATION after %v:\n%s", s.events, settle, last)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// verify reads the real cgroups and compares: each container's cpuset.cpus
// and cpuset.mems equal the agent's journal and containerd's record;
// Guaranteed containers' exclusive CPUs are disjoint from every other
// pinned container's; nothing is outside the online CPUs; a container runs
// unpinned only where the agent logged a fail-open for it.
func (s *soak) verify() string {
	j, err := s.a.Journal()
	if err != nil {
		return err.Error()
	}
	var bad []string
	sets := map[string]cpuset.Set{}
	log := s.a.Log()
	for id, l := range s.ctrs {
		c, ok := j.Container(id)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: not in the agent's journal", id))
			continue
		}
		cpus, mems, err := s.c.Cpusets(s.ctx, id)
		if err != nil {
			return err.Error()
		}
		rcpus, rmems, err := s.c.Recorded(s.ctx, id)
		if err != nil {
			return err.Error()
		}
		a := c.GetAssignment()
		set, err := cpuset.Parse(cpus)
		if err != nil {
			return err.Error()
		}
		if !set.IsSubsetOf(s.online) {
			bad = append(bad, fmt.Sprintf("%s: cgroup cpus %q outside the online CPUs %q", id, cpus, s.online))
		}
		if a.GetCpusetCpus() == "" {
			if !set.Equal(s.online) || !strings.Contains(log, "containerID="+id) || !strings.Contains(log, "POLICY FAILED") {
				bad = append(bad, fmt.Sprintf("%s (%s): no assignment, cgroup cpus %q, and no fail-open logged for it", id, l.qos, cpus))
			}
			continue
		}
		sets[id] = set // pinned; a fail-open one runs on every CPU by design
		if !same(cpus, a.GetCpusetCpus()) || !same(rcpus, a.GetCpusetCpus()) {
			bad = append(bad, fmt.Sprintf("%s (%s): journal cpus %q, containerd's record %q, cgroup %q", id, l.qos, a.GetCpusetCpus(), rcpus, cpus))
		}
		if m := a.GetCpusetMems(); m != "" && (!same(mems, m) || !same(rmems, m)) {
			bad = append(bad, fmt.Sprintf("%s (%s): journal mems %q, containerd's record %q, cgroup %q", id, l.qos, m, rmems, mems))
		}
	}
	for id, l := range s.ctrs {
		if l.qos != containerd.Guaranteed || j == nil {
			continue
		}
		c, _ := j.Container(id)
		if c.GetAssignment().GetCpusetCpus() == "" {
			continue
		}
		for other, set := range sets {
			if other != id && set.Intersects(sets[id]) {
				bad = append(bad, fmt.Sprintf("%s (Guaranteed, exclusive %v) overlaps %s (%v)", id, sets[id], other, set))
			}
		}
	}
	if s.dra != nil {
		bad = append(bad, s.dra.verify(sets)...)
	}
	slices.Sort(bad)
	return strings.Join(bad, "\n")
}

func same(a, b string) bool {
	sa, err1 := cpuset.Parse(a)
	sb, err2 := cpuset.Parse(b)
	return err1 == nil && err2 == nil && sa.Equal(sb)
}
