//go:build integration && footprint

package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/integration/agent"
)

// thousand is how many live containers TestAgentThousandContainersFigures
// runs: the load, 100 pods of 10.
const thousand = 1000

// TestAgentThousandContainersFigures measures, without asserting a figure,
// the real agent's memory with the topology-aware policy and 1,000 live
// containers, driven by NRI's own runtime side (agent.Runtime: the
// adaptation containerd embeds, pods and containers in memory) on nri-plugins'
// 144-CPU fixture (a sysfs tree under --sysfs):
//
//  1. cold: an empty cache and no seed, so the policy starts on the
//     interpreter while a child process compiles it; 1,000 containers are
//     created, then the agent moves to the compiled code;
//  2. warm, 1,000 created: a new state directory on the filled cache, then
//     1,000 containers created through a new runtime;
//  3. warm restart with 1,000 live: the agent of 2 stopped and started
//     again, the checkpoint restored and the 1,000 containers synchronized.
//
// Each reads /proc/PID/status and smaps_rollup and the Go runtime's figures
// from /metrics (FIGURE lines for docs/performance.md). It asserts what the
// figures rest on: every container got a cpuset from the policy (the same
// after the restart), the cold agent runs compiled code at the end, its
// resident memory after the move is below the interpreter's peak (the
// compile's peak is not kept), and the agent settles after the warm burst
// (host/internal/cli/settle.go logs it; the steady figure is read after).
//
// Build tag footprint (about a minute of two busy cores, most of it the
// cold compile): `make bench-footprint` runs it, `make integration` does not.
// It needs neither root nor containerd.
func TestAgentThousandContainersFigures(t *testing.T) {
	sysfs, err := topologytest.Server4Socket144CPUNoSNC().WriteCached(filepath.Join(os.TempDir(), "nriwasm-it-sysfs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cache := filepath.Join(t.TempDir(), "cache")
	config := func(seed string) string {
		return "policy:\n  name: topology-aware\n  cacheDir: " + cache + "\n  seedDir: " + seed + "\nlog:\n  verbosity: 1\n"
	}

	// 1. Cold.
	rt := agent.StartRuntime(t)
	a := agent.Start(t, agent.Options{Binary: binary, NRISocket: rt.Socket, Sysfs: sysfs,
		Config: config(filepath.Join(t.TempDir(), "no-seed"))})
	t.Logf("FIGURE cold start to ready (interpreter first): %v", a.ReadyAfter)
	interpreted := metric(t, ctx, a, "nriwasm_policy_interpreted") == 1
	logFootprint(t, ctx, a, fmt.Sprintf("cold, at ready (on the interpreter: %v)", interpreted))
	began := time.Now()
	runThousand(t, ctx, rt, "cold")
	t.Logf("FIGURE cold: %d containers created in %v (on the interpreter at the end: %v)",
		thousand, time.Since(began), metric(t, ctx, a, "nriwasm_policy_interpreted") == 1)
	logFootprint(t, ctx, a, "cold, 1,000 containers created")
	waitCompiledCode(t, ctx, a)
	for _, line := range agentLogLines(a, "compiled in a child process", "moved from the interpreter", "settled after a burst") {
		t.Logf("FIGURE %s", line)
	}
	time.Sleep(steadyAfter)
	peak, after := logFootprint(t, ctx, a, fmt.Sprintf("cold, %v after the move to compiled code (steady)", steadyAfter))
	if after >= peak {
		t.Errorf("after the move to compiled code the agent holds %d KiB, its peak (VmHWM) %d KiB: the interpreter's and the compile's memory was kept", after>>10, peak>>10)
	}
	checkPlaced(t, rt, thousand)
	a.Stop(t)

	// 2. Warm: the cache is filled; a new node (state directory, runtime).
	rt2 := agent.StartRuntime(t)
	b := agent.Start(t, agent.Options{Binary: binary, NRISocket: rt2.Socket, Sysfs: sysfs,
		Config: config(filepath.Join(t.TempDir(), "no-seed"))})
	t.Logf("FIGURE warm start to ready: %v", b.ReadyAfter)
	if metric(t, ctx, b, "nriwasm_policy_interpreted") != 0 {
		t.Fatalf("the warm start runs on the interpreter: the cache was not used; its log:\n%s", b.StartLog())
	}
	logFootprint(t, ctx, b, "warm, at ready")
	began = time.Now()
	runThousand(t, ctx, rt2, "warm")
	t.Logf("FIGURE warm: %d containers created in %v", thousand, time.Since(began))
	logFootprint(t, ctx, b, "warm, 1,000 containers created")
	waitSettled(t, ctx, b, "warm, 1,000 containers created")
	before := checkPlaced(t, rt2, thousand)

	// 3. Warm restart with the 1,000 containers live.
	b.Stop(t)
	syncs := rt2.Syncs()
	b.Restart(t)
	t.Logf("FIGURE warm restart to ready, %d live containers: %v", thousand, b.ReadyAfter)
	// The agent is ready once it answered; the runtime counts the
	// Synchronize when the answer reached it.
	b.Eventually(t, checkTimeout, func() string {
		if n := rt2.Syncs() - syncs; n != 1 {
			return fmt.Sprintf("the runtime synchronized the restarted agent %d times, want 1", n)
		}
		return ""
	})
	if lines := agentLogLines(b, "msg=synchronized"); len(lines) != 1 || !strings.Contains(lines[0], fmt.Sprintf("containers=%d forgotten=0 updates=0", thousand)) {
		t.Errorf("the restarted agent's Synchronize: %q, want %d containers, none forgotten or moved", lines, thousand)
	}
	logFootprint(t, ctx, b, "warm restart with 1,000 live containers, at ready")
	waitSettled(t, ctx, b, "warm restart with 1,000 live containers")
	for id, cpus := range before {
		if now := rt2.CPUs(id); now != cpus {
			t.Errorf("container %s ran on %q before the restart, %q after", id, cpus, now)
		}
	}
}

// waitSettled waits until the agent's current start has settled after a
// burst of work (host/internal/cli/settle.go logs "settled after a burst of
// work"), reading its log, which allocates nothing in the agent; it logs the
// footprint then (the burst's garbage returned, the executable's pages
// dropped) and steadyAfter later (what the idle agent maps again).
func waitSettled(t *testing.T, ctx context.Context, a *agent.Agent, what string) {
	t.Helper()
	start := time.Now()
	var settled []string
	a.Eventually(t, checkTimeout, func() string {
		if settled = agentLogLines(a, "settled after a burst"); len(settled) == 0 {
			return "waiting for the agent to settle after the burst (\"settled after a burst of work\" in its log): " + what
		}
		return ""
	})
	for _, line := range settled {
		t.Logf("FIGURE %s", line)
	}
	logFootprint(t, ctx, a, fmt.Sprintf("%s, settled (%v after the previous figure)", what, time.Since(start).Round(100*time.Millisecond)))
	time.Sleep(steadyAfter)
	logFootprint(t, ctx, a, fmt.Sprintf("%s, settled and %v later (steady)", what, steadyAfter))
}

// runThousand runs thousand Burstable containers (100m, limit 1 CPU, 256 MiB),
// 10 to a pod, through rt, as kubelet and containerd would describe them.
func runThousand(t *testing.T, ctx context.Context, rt *agent.Runtime, prefix string) {
	t.Helper()
	for i := range thousand / 10 {
		p := kubePod(fmt.Sprintf("%s-%03d", prefix, i))
		if err := rt.RunPod(ctx, p); err != nil {
			t.Fatal(err)
		}
		for j := range 10 {
			if _, err := rt.Run(ctx, p, kubeContainer(p, fmt.Sprintf("c%d", j))); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// kubePod is a Burstable pod as containerd's CRI plugin hands it to NRI.
func kubePod(name string) *api.PodSandbox {
	uid := fmt.Sprintf("%08x-0000-4000-8000-%012x", len(name), hash(name))
	return &api.PodSandbox{
		Id: fmt.Sprintf("%064x", hash("sandbox/"+name)), Name: name, Uid: uid, Namespace: "default",
		Labels: map[string]string{
			"app": name, "io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": "default",
			"io.kubernetes.pod.uid": uid,
		},
		Annotations: map[string]string{
			"kubernetes.io/config.seen": "2026-12-02T06:00:00.000000000Z", "kubernetes.io/config.source": "api",
		},
		Linux: &api.LinuxPodSandbox{
			CgroupParent: "kubepods-burstable-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice",
			CgroupsPath:  "kubepods-burstable-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice:cri-containerd:" + name,
			PodResources: &api.LinuxResources{Cpu: &api.LinuxCPU{Shares: api.UInt64(1024)}, Memory: &api.LinuxMemory{Limit: api.Int64(10 << 28)}},
		},
	}
}

// kubeContainer is a container of pod as containerd's CRI plugin hands it
// to NRI: kubelet's labels and annotations, environment and mounts, and its
// resources (100m request, 1 CPU limit, 256 MiB).
func kubeContainer(pod *api.PodSandbox, name string) *api.Container {
	id := fmt.Sprintf("%064x", hash(pod.GetName()+"/"+name))
	return &api.Container{
		Id: id, PodSandboxId: pod.GetId(), Name: name,
		Labels: map[string]string{
			"io.kubernetes.container.name": name, "io.kubernetes.pod.name": pod.GetName(),
			"io.kubernetes.pod.namespace": pod.GetNamespace(), "io.kubernetes.pod.uid": pod.GetUid(),
		},
		Annotations: map[string]string{
			"io.kubernetes.container.hash": strconv.FormatUint(hash(id)&0xffffffff, 16), "io.kubernetes.container.restartCount": "0",
			"io.kubernetes.container.terminationMessagePath": "/dev/termination-log", "io.kubernetes.container.terminationMessagePolicy": "File",
			"io.kubernetes.pod.terminationGracePeriod": "30",
		},
		Args: []string{"/bin/sleep", "infinity"},
		Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME=" + pod.GetName(),
			"KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443", "KUBERNETES_SERVICE_PORT_HTTPS=443",
			"KUBERNETES_PORT=tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443",
			"KUBERNETES_PORT_443_TCP_PROTO=tcp", "KUBERNETES_PORT_443_TCP_PORT=443", "KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1"},
		Mounts: []*api.Mount{
			{Destination: "/etc/hosts", Source: "/var/lib/kubelet/pods/" + pod.GetUid() + "/etc-hosts", Type: "bind", Options: []string{"rbind", "rprivate", "rw"}},
			{Destination: "/dev/termination-log", Source: "/var/lib/kubelet/pods/" + pod.GetUid() + "/containers/" + name + "/0", Type: "bind", Options: []string{"rbind", "rprivate", "rw"}},
			{Destination: "/var/run/secrets/kubernetes.io/serviceaccount", Source: "/var/lib/kubelet/pods/" + pod.GetUid() + "/volumes/kubernetes.io~projected/kube-api-access", Type: "bind", Options: []string{"rbind", "rprivate", "ro"}},
			{Destination: "/proc", Source: "proc", Type: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/dev", Source: "tmpfs", Type: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		},
		Linux: &api.LinuxContainer{
			Resources: &api.LinuxResources{
				Cpu:    &api.LinuxCPU{Shares: api.UInt64(102), Quota: api.Int64(100000), Period: api.UInt64(100000)},
				Memory: &api.LinuxMemory{Limit: api.Int64(256 << 20)},
			},
			OomScoreAdj: api.Int(999),
			CgroupsPath: pod.GetLinux().GetCgroupParent() + ":cri-containerd:" + id,
		},
	}
}

// hash is FNV-1a, for stable fake ids.
func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// checkPlaced checks that the runtime runs n containers and each got a
// cpuset from the policy; it returns the cpusets by container id.
func checkPlaced(t *testing.T, rt *agent.Runtime, n int) map[string]string {
	t.Helper()
	if got := rt.Containers(); got != n {
		t.Fatalf("the runtime runs %d containers, want %d", got, n)
	}
	out := map[string]string{}
	sizes := map[int]int{}
	for i := range thousand / 10 {
		for _, prefix := range []string{"cold", "warm"} {
			p := kubePod(fmt.Sprintf("%s-%03d", prefix, i))
			for j := range 10 {
				id := kubeContainer(p, fmt.Sprintf("c%d", j)).GetId()
				cpus := rt.CPUs(id)
				if cpus == "" {
					continue // the other phase's container
				}
				set, err := cpuset.Parse(cpus)
				if err != nil || set.Size() == 0 {
					t.Errorf("container %s/c%d runs on %q: not a cpuset from the policy", p.GetName(), j, cpus)
					continue
				}
				out[id] = cpus
				sizes[set.Size()]++
			}
		}
	}
	if len(out) != n {
		t.Errorf("%d of %d containers got a cpuset", len(out), n)
	}
	t.Logf("cpuset sizes (CPUs: containers): %v", sizes)
	return out
}

// waitCompiledCode waits until the agent runs the policy's compiled code.
func waitCompiledCode(t *testing.T, ctx context.Context, a *agent.Agent) {
	t.Helper()
	a.Eventually(t, 3*time.Minute, func() string {
		m, err := a.Metrics(ctx)
		if err != nil {
			return err.Error()
		}
		if m.Sum("nriwasm_policy_interpreted") != 0 {
			return "waiting for the move to compiled code"
		}
		return ""
	})
}

// metric is the sum of the agent's samples named name.
func metric(t *testing.T, ctx context.Context, a *agent.Agent, name string) float64 {
	t.Helper()
	m, err := a.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m.Sum(name)
}

// agentLogLines is the current start's log lines holding any of subs.
func agentLogLines(a *agent.Agent, subs ...string) []string {
	var out []string
	for line := range strings.SplitSeq(a.StartLog(), "\n") {
		for _, s := range subs {
			if strings.Contains(line, s) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// logFootprint logs, as a FIGURE line, the agent's resident memory
// (/proc/PID/status: VmRSS, RssAnon, RssFile, VmHWM; smaps_rollup's
// Private_Dirty) and its Go runtime's heap in use, stacks and goroutines
// (/metrics); it returns VmHWM and VmRSS in bytes.
func logFootprint(t *testing.T, ctx context.Context, a *agent.Agent, when string) (hwm, rss int64) {
	t.Helper()
	fields := []string{"VmRSS", "RssAnon", "RssFile", "VmHWM"}
	v := make([]int64, len(fields))
	for i, f := range fields {
		b, err := a.Status(f)
		if err != nil {
			t.Fatal(err)
		}
		v[i] = b
	}
	dirty, err := agent.SmapsRollup(a.PID(), "Private_Dirty")
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	t.Logf("FIGURE agent %s: VmRSS %.1f MiB (anonymous %.1f, file %.1f), VmHWM %.1f, private dirty %.1f; Go heap in use %.1f MiB, stacks %.1f, %v goroutines",
		when, float64(v[0])/mib, float64(v[1])/mib, float64(v[2])/mib, float64(v[3])/mib, float64(dirty)/mib,
		m.Sum("go_memstats_heap_inuse_bytes")/mib, m.Sum("go_memstats_stack_inuse_bytes")/mib, m.Sum("go_goroutines"))
	return v[3], v[0]
}
