//go:build integration && e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nriwasm/nriwasm/integration/agent"
	"github.com/nriwasm/nriwasm/integration/containerd"
	"github.com/nriwasm/nriwasm/integration/e2e"
)

const (
	release = "nriwasm"
	// namespace is where the chart installs the agent: kube-system, as
	// nri-plugins does, so the agent's own pod sits on the reserved CPUs. In
	// another namespace it shares the node's only unreserved CPU on a 2-CPU
	// node, and the policy rightly refuses that CPU to an exclusive claim.
	namespace = "kube-system"
	workloads = "e2e"
	// agentImage is the name the agent's image is imported as.
	agentImage = "localhost/nriwasm/agent:e2e"
	// driver is the DRA driver (and DeviceClass) the chart sets up for
	// topology-aware.
	driver = "topology-aware.nri.io"
)

// step logs how long one step of the path took, as docs/e2e.md lists them.
func step(t *testing.T, what string, d time.Duration) {
	t.Helper()
	t.Logf("TIMING %-40s %v", what, d.Round(time.Millisecond))
}

// TestOneNodeCluster installs the chart into a real one-node cluster and
// follows a user's first hour: the agent's pod, pods of every QoS class, a
// claim through the real scheduler and kubelet, restarts of the kubelet,
// containerd and the agent, an upgrade and an uninstall. Every check reads
// the real peer: cgroups, the API server, the kubelet's calls.
func TestOneNodeCluster(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	c := e2e.Start(t)
	step(t, "cluster up (node Ready)", time.Since(start))

	t0 := time.Now()
	bin, err := e2e.BuildAgent(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "agent.tar")
	if err := e2e.BuildAgentImage(bin, agentImage, archive); err != nil {
		t.Fatal(err)
	}
	if err := c.Runtime.ImportImage(ctx, archive, agentImage); err != nil {
		t.Fatal(err)
	}
	step(t, "agent built, image written and imported", time.Since(t0))

	ports, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, c: c, bin: bin, metrics: ports, values: map[string]any{
		"image":       map[string]any{"repository": strings.Split(agentImage, ":")[0], "tag": "e2e", "pullPolicy": "Never"},
		"hostNetwork": true,
		// No kube-proxy here: the agent reaches the API server on loopback.
		"extraEnv": []any{
			map[string]any{"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"},
			map[string]any{"name": "KUBERNETES_SERVICE_PORT", "value": strconv.Itoa(c.API.Port())},
		},
		"nri":      map[string]any{"socketPath": c.NRISocket},
		"dra":      map[string]any{"enabled": true, "kubeletDir": c.KubeletDir, "cdiDir": c.CDIDir},
		"stateDir": c.StateDir,
		"metrics":  map[string]any{"port": ports},
	}}

	ok := t.Run("install", w.install) &&
		t.Run("qos", w.qosClasses) &&
		t.Run("claim", w.claim) &&
		t.Run("restart-kubelet", w.restartKubelet) &&
		t.Run("restart-containerd", w.restartContainerd) &&
		t.Run("restart-agent", w.restartAgent) &&
		t.Run("upgrade", w.upgrade) &&
		t.Run("unprepare", w.unprepare) &&
		t.Run("uninstall", w.uninstall) &&
		t.Run("balloons", w.balloons)
	if !ok {
		t.Fatal("a step failed; the later ones did not run")
	}
}

// world is the state the steps share.
type world struct {
	t       *testing.T
	c       *e2e.Cluster
	bin     string // nriwasm, for nriwasm simulate
	metrics int
	values  map[string]any
	h       *e2e.Helm
	// placed are the workload containers and where the agent put them, by
	// container ID, once checked; restarts must keep them.
	placed map[string]placement
	// claimPod runs with the claim; claimCPUs are the claim's CPUs.
	claimPod, claimCPUs string
	claimUID            string
}

type placement struct{ cpus, mems string }

func (w *world) helm(t *testing.T) *e2e.Helm {
	if w.h == nil {
		h, err := w.c.NewHelm(filepath.Join("..", "..", "charts", "nriwasm"))
		if err != nil {
			t.Fatal(err)
		}
		w.h = h
	}
	return w.h
}

// install: helm install with dra.enabled=true alone; the DaemonSet's pod
// runs, its probes pass (/readyz needs the runtime's first Synchronize), its
// slices are published with devices, and its memory is read from its cgroup.
func (w *world) install(t *testing.T) {
	ctx := context.Background()
	d, err := w.helm(t).Install(ctx, "install", release, namespace, w.values)
	if err != nil {
		t.Fatal(err)
	}
	step(t, "helm install", d)
	t0 := time.Now()
	pod := w.agentPod(t, "")
	step(t, "install to agent pod Ready", time.Since(t0)+d)
	w.readyz(t)
	w.c.Eventually(t, time.Minute, "the agent's ResourceSlice with devices", func(ctx context.Context) (bool, error) {
		return len(w.devices(ctx)) > 0, nil
	})
	step(t, "install to devices published", time.Since(t0)+d)
	w.memoryFigure(t, pod)
}

// agentPod waits until the DaemonSet's pod other than old runs Ready and
// returns it.
func (w *world) agentPod(t *testing.T, old string) *corev1.Pod {
	t.Helper()
	var ready *corev1.Pod
	w.c.Eventually(t, 3*time.Minute, "the agent's pod Running and Ready", func(ctx context.Context) (bool, error) {
		pods, err := w.c.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=nriwasm"})
		if err != nil {
			return false, nil
		}
		for i, p := range pods.Items {
			if string(p.UID) == old || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
				continue
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					ready = &pods.Items[i]
					return true, nil
				}
			}
		}
		return false, nil
	})
	return ready
}

// readyz asks the agent itself (host network, the chart's metrics port).
func (w *world) readyz(t *testing.T) {
	t.Helper()
	w.c.Eventually(t, time.Minute, "the agent's /readyz", func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/readyz", w.metrics), nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode == http.StatusOK, nil
	})
}

// devices lists the devices of the node's slices of the driver.
func (w *world) devices(ctx context.Context) []string {
	sl, err := w.c.Client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var names []string
	for _, s := range sl.Items {
		if s.Spec.Driver == driver && ptr.Deref(s.Spec.NodeName, "") == e2e.NodeName {
			for _, d := range s.Spec.Devices {
				names = append(names, d.Name)
			}
		}
	}
	return names
}

// memoryFigure logs the agent pod's memory as its cgroup counts it (the
// chart's requests and limits come from these figures).
func (w *world) memoryFigure(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	dir := filepath.Join("/sys/fs/cgroup/memory", w.c.Runtime.CgroupRoot, "kubepods", "burstable", "pod"+string(pod.UID))
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "?"
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return "?"
		}
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	t.Logf("FIGURE agent pod memory (its memory cgroup): usage %s, max usage %s",
		read("memory.usage_in_bytes"), read("memory.max_usage_in_bytes"))
}

// workload is one pod of the QoS step.
type workload struct {
	name string
	qos  corev1.PodQOSClass
	res  corev1.ResourceRequirements
}

// step is the workload's pod as a `nriwasm simulate` step.
func (wl workload) step() agent.ScenarioStep {
	r := &agent.ScenarioResources{Requests: map[string]string{}, Limits: map[string]string{}}
	for k, v := range wl.res.Requests {
		r.Requests[string(k)] = v.String()
	}
	for k, v := range wl.res.Limits {
		r.Limits[string(k)] = v.String()
	}
	return agent.ScenarioStep{Pod: &agent.ScenarioPod{Name: wl.name, Namespace: workloads, QOSClass: string(wl.qos),
		Containers: []agent.ScenarioContainer{{Name: "main", Resources: r}}}}
}

// agentStep is the agent's own pod, as the chart makes it, as a `nriwasm
// simulate` step: the first container the policy places.
var agentStep = agent.ScenarioStep{Pod: &agent.ScenarioPod{Name: "agent", Namespace: namespace, QOSClass: "Burstable",
	Containers: []agent.ScenarioContainer{{Name: "agent", Resources: &agent.ScenarioResources{
		Requests: map[string]string{"cpu": "50m", "memory": "128Mi"}, Limits: map[string]string{"memory": "512Mi"}}}}}}

var qosWorkloads = []workload{
	{name: "guaranteed", qos: corev1.PodQOSGuaranteed, res: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("32Mi")}}},
	{name: "burstable", qos: corev1.PodQOSBurstable, res: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("16Mi")}}},
	{name: "besteffort", qos: corev1.PodQOSBestEffort},
}

// qosClasses: a pod of every QoS class, one after another; each container's
// cgroup (cpuset.cpus, cpuset.mems) holds what the policy decides for the
// same history on this node (nriwasm simulate: the agent's own pod first,
// then these), unpinned where the policy refused (fail-open).
func (w *world) qosClasses(t *testing.T) {
	ctx := context.Background()
	if _, err := w.c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workloads}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.waitServiceAccount(t, workloads)
	sc := agent.Scenario{Steps: []agent.ScenarioStep{agentStep}}
	ids := map[string]string{}
	for _, wl := range qosWorkloads {
		t0 := time.Now()
		pod := w.runPod(t, wl.name, wl.res, nil)
		step(t, "create to Running: "+string(wl.qos), time.Since(t0))
		if pod.Status.QOSClass != wl.qos {
			t.Fatalf("pod %s is %s, want %s", wl.name, pod.Status.QOSClass, wl.qos)
		}
		ids[wl.name] = containerID(pod)
		sc.Steps = append(sc.Steps, wl.step())
	}
	sim, err := agent.Simulate(ctx, w.bin, "topology-aware", "/sys", t.TempDir(), sc)
	if err != nil {
		t.Fatal(err)
	}
	want := sim.After(-1)
	online, err := containerd.OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	w.placed = map[string]placement{}
	for _, wl := range qosWorkloads {
		d, ok := want[workloads+"/"+wl.name+"/main"]
		if !ok {
			t.Fatalf("nriwasm simulate has no decision for %s: %+v", wl.name, want)
		}
		expect := d.CPUs
		if d.Refused != "" || expect == "" {
			expect = online
		}
		id := ids[wl.name]
		var got placement
		w.c.Eventually(t, 30*time.Second, wl.name+"'s cgroup", func(ctx context.Context) (bool, error) {
			got = w.cgroup(ctx, id)
			return got.cpus == expect, nil
		})
		t.Logf("%s (%s): cgroup cpus %s mems %s; policy: %+v", wl.name, wl.qos, got.cpus, got.mems, d)
		w.placed[id] = got
	}
}

// waitServiceAccount waits for the namespace's default service account
// (the controller manager makes it; pods are refused without it).
func (w *world) waitServiceAccount(t *testing.T, ns string) {
	t.Helper()
	w.c.Eventually(t, time.Minute, "service account "+ns+"/default", func(ctx context.Context) (bool, error) {
		_, err := w.c.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// runPod creates a host-network busybox pod in the workload namespace and
// waits until it runs.
func (w *world) runPod(t *testing.T, name string, res corev1.ResourceRequirements, claim *string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workloads},
		Spec: corev1.PodSpec{
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "main", Image: containerd.ImageRef, ImagePullPolicy: corev1.PullNever,
				Command: []string{"/bin/sleep", "3600"}, Resources: res,
			}},
		},
	}
	if claim != nil {
		pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "cpu", ResourceClaimName: claim}}
		pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "cpu"}}
	}
	if _, err := w.c.Client.CoreV1().Pods(workloads).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	var running *corev1.Pod
	w.c.Eventually(t, 2*time.Minute, "pod "+name+" Running", func(ctx context.Context) (bool, error) {
		p, err := w.c.Client.CoreV1().Pods(workloads).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		running = p
		return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].ContainerID != "", nil
	})
	return running
}

func containerID(p *corev1.Pod) string {
	_, id, _ := strings.Cut(p.Status.ContainerStatuses[0].ContainerID, "://")
	return id
}

// cgroup reads a container's real cpuset.cpus and cpuset.mems.
func (w *world) cgroup(ctx context.Context, id string) placement {
	cpus, err := w.c.Runtime.CPUSet(ctx, id)
	if err != nil {
		return placement{cpus: "error: " + err.Error()}
	}
	mems, err := w.c.Runtime.MemSet(ctx, id)
	if err != nil {
		return placement{cpus: cpus, mems: "error: " + err.Error()}
	}
	return placement{cpus: cpus, mems: mems}
}

// claim: a ResourceClaim for one CPU from the chart's DeviceClass; the real
// scheduler allocates it, the real kubelet prepares it through the agent
// (NodePrepareResources), the container's cgroup holds the claim's CPUs,
// the claim's status.devices says so, and the CDI spec is on the node.
func (w *world) claim(t *testing.T) {
	ctx := context.Background()
	// The QoS pods leave: on a small node the claim needs their CPUs.
	for _, wl := range qosWorkloads {
		w.deletePod(t, wl.name)
	}
	w.placed = map[string]placement{}
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "one-cpu", Namespace: workloads},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "cpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: driver,
				Capacity: &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"dra.cpu/cpu": resource.MustParse("1")}}},
		}}}},
	}
	created, err := w.c.Client.ResourceV1().ResourceClaims(workloads).Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the claim: %v", err)
	}
	w.claimUID = string(created.UID)
	t0 := time.Now()
	pod := w.runPod(t, "claimant", corev1.ResourceRequirements{}, ptr.To(claim.Name))
	step(t, "claim to pod Running", time.Since(t0))
	w.claimPod = containerID(pod)

	c, err := w.c.Client.ResourceV1().ResourceClaims(workloads).Get(ctx, claim.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) != 1 || c.Status.Allocation.Devices.Results[0].Driver != driver {
		t.Fatalf("claim not allocated to %s by the scheduler: %+v", driver, c.Status.Allocation)
	}
	if !slices.ContainsFunc(c.Status.ReservedFor, func(r resourcev1.ResourceClaimConsumerReference) bool { return r.UID == pod.UID }) {
		t.Errorf("claim reserved for %+v, not the pod %s", c.Status.ReservedFor, pod.UID)
	}
	w.c.Eventually(t, 30*time.Second, "the claim's status.devices", func(ctx context.Context) (bool, error) {
		w.claimCPUs = w.claimStatusCPUs(ctx)
		return w.claimCPUs != "", nil
	})
	step(t, "claim to status.devices written", time.Since(t0))
	var got placement
	w.c.Eventually(t, 30*time.Second, "the claimant's cgroup on the claim's CPUs", func(ctx context.Context) (bool, error) {
		got = w.cgroup(ctx, w.claimPod)
		return got.cpus == w.claimCPUs, nil
	})
	if specs := w.cdiSpecs(t); len(specs) != 1 || !strings.Contains(specs[0], w.claimUID) {
		t.Errorf("CDI specs %v, want the claim's", specs)
	}
	t.Logf("claim %s: device %s, CPUs %s; the claimant's cgroup: %+v", w.claimUID, c.Status.Allocation.Devices.Results[0].Device, w.claimCPUs, got)
	w.placed[w.claimPod] = got

	// A shared container beside the claim, for the restarts to keep too.
	shared := w.runPod(t, "beside-claim", corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}, nil)
	id := containerID(shared)
	var beside placement
	w.c.Eventually(t, 30*time.Second, "the shared container's cgroup", func(ctx context.Context) (bool, error) {
		beside = w.cgroup(ctx, id)
		return !strings.HasPrefix(beside.cpus, "error"), nil
	})
	t.Logf("beside-claim (Burstable): cgroup %+v", beside)
	w.placed[id] = beside
}

// claimStatusCPUs is the cpuset our driver wrote into the claim's
// status.devices ("" if none).
func (w *world) claimStatusCPUs(ctx context.Context) string {
	c, err := w.c.Client.ResourceV1().ResourceClaims(workloads).Get(ctx, "one-cpu", metav1.GetOptions{})
	if err != nil {
		return ""
	}
	for _, d := range c.Status.Devices {
		if d.Driver != driver || d.Data == nil {
			continue
		}
		var data struct {
			CPUSet string `json:"cpuset"`
		}
		if json.Unmarshal(d.Data.Raw, &data) == nil && data.CPUSet != "" {
			return data.CPUSet
		}
	}
	return ""
}

func (w *world) cdiSpecs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(w.c.CDIDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func (w *world) deletePod(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	if err := w.c.Client.CoreV1().Pods(workloads).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	w.c.Eventually(t, 2*time.Minute, "pod "+name+" gone", func(ctx context.Context) (bool, error) {
		_, err := w.c.Client.CoreV1().Pods(workloads).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// unchanged checks that every placed container keeps its cgroup and the
// claim keeps its status and CDI spec.
func (w *world) unchanged(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for id, want := range w.placed {
		if got := w.cgroup(ctx, id); got != want {
			t.Errorf("container %s: cgroup %+v, was %+v", id, got, want)
		}
	}
	if got := w.claimStatusCPUs(ctx); got != w.claimCPUs {
		t.Errorf("claim status CPUs %q, was %q", got, w.claimCPUs)
	}
	if specs := w.cdiSpecs(t); len(specs) != 1 {
		t.Errorf("CDI specs %v, want the claim's", specs)
	}
}

func (w *world) restartKubelet(t *testing.T) {
	t0 := time.Now()
	w.c.StopKubelet(t)
	w.c.StartKubelet(t)
	w.c.WaitKubeletUp(t, t0)
	w.c.WaitNodeReady(t)
	w.agentPod(t, "")
	w.readyz(t)
	step(t, "kubelet restart to reconverged", time.Since(t0))
	w.unchanged(t)
}

func (w *world) restartContainerd(t *testing.T) {
	t0 := time.Now()
	w.c.Runtime.Restart(t)
	w.c.WaitNodeReady(t)
	w.readyz(t)
	w.agentPod(t, "")
	step(t, "containerd restart to reconverged", time.Since(t0))
	w.unchanged(t)
}

func (w *world) restartAgent(t *testing.T) {
	ctx := context.Background()
	old := w.agentPod(t, "")
	t0 := time.Now()
	if err := w.c.Client.CoreV1().Pods(namespace).Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.agentPod(t, string(old.UID))
	w.readyz(t)
	step(t, "agent pod deleted to replacement Ready", time.Since(t0))
	w.unchanged(t)
}

// upgrade: helm upgrade with a value the agent cannot change live rolls the
// pod with a surge (the new one Ready beside the old before the old goes);
// no container moves, the claim stays prepared. The value is the metrics
// port: with hostNetwork the surge pod cannot bind the old pod's port.
func (w *world) upgrade(t *testing.T) {
	ctx := context.Background()
	old := w.agentPod(t, "")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	w.metrics = port
	w.values["metrics"] = map[string]any{"port": port}
	d, err := w.helm(t).Install(ctx, "upgrade", release, namespace, w.values)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	w.agentPod(t, string(old.UID))
	w.c.Eventually(t, 2*time.Minute, "the old agent pod gone", func(ctx context.Context) (bool, error) {
		_, err := w.c.Client.CoreV1().Pods(namespace).Get(ctx, old.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	w.readyz(t)
	step(t, "helm upgrade to new pod Ready, old gone", time.Since(t0)+d)
	w.unchanged(t)
}

// unprepare: deleting the claimant makes the kubelet unprepare the claim:
// the CDI spec goes and the driver's status.devices entry is cleared.
func (w *world) unprepare(t *testing.T) {
	t0 := time.Now()
	w.deletePod(t, "claimant")
	delete(w.placed, w.claimPod)
	w.c.Eventually(t, time.Minute, "the claim unprepared", func(ctx context.Context) (bool, error) {
		return w.claimStatusCPUs(ctx) == "" && len(w.cdiSpecs(t)) == 0, nil
	})
	step(t, "claimant deleted to claim unprepared", time.Since(t0))
}

// uninstall: helm uninstall leaves no pod, no ResourceSlice and no socket
// of the agent's on the node.
func (w *world) uninstall(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	if _, err := w.helm(t).Run(ctx, "uninstall", release, "--namespace", namespace, "--wait"); err != nil {
		t.Fatal(err)
	}
	w.c.Eventually(t, 2*time.Minute, "the agent's pods gone", func(ctx context.Context) (bool, error) {
		pods, err := w.c.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, nil
	})
	w.c.Eventually(t, 2*time.Minute, "the agent's ResourceSlices gone", func(ctx context.Context) (bool, error) {
		return len(w.devices(ctx)) == 0, nil
	})
	step(t, "helm uninstall to nothing left", time.Since(t0))
	for _, dir := range []string{filepath.Join(w.c.KubeletDir, "plugins_registry"), filepath.Join(w.c.KubeletDir, "plugins", driver)} {
		entries, _ := os.ReadDir(dir)
		var socks []string
		for _, e := range entries {
			if e.Type()&os.ModeSocket != 0 {
				socks = append(socks, e.Name())
			}
		}
		if len(socks) > 0 {
			t.Errorf("sockets left in %s: %v", dir, socks)
		}
	}
}

func freePort() (int, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
