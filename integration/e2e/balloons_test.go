//go:build integration && e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nriwasm/nriwasm/integration/agent"
)

// balloonsConfig is the balloons step's policy configuration: one CPU kept
// for kube-system (the agent's own pod, in the reserved balloon) and a
// balloon type for the workload namespace, one CPU at most, so that on the
// smallest node (2 CPUs) the workloads' balloon and the reserved one hold
// different CPUs.
var balloonsConfig = map[string]any{
	"reservedResources": map[string]any{"cpu": "1"},
	"balloonTypes": []any{
		map[string]any{"name": "workloads", "namespaces": []any{workloads}, "maxCPUs": 1},
	},
}

// balloonWorkloads are the balloons step's pods, all in the workload
// namespace: one balloon of the "workloads" type holds them.
var balloonWorkloads = []workload{
	{name: "balloon-burstable", qos: corev1.PodQOSBurstable, res: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("16Mi")}}},
	{name: "balloon-besteffort", qos: corev1.PodQOSBestEffort},
}

// balloons: after the uninstall, helm install with policy.name=balloons and
// balloonsConfig (DRA off: the configuration publishes no devices). The
// agent's pod comes up Ready; pods of the workload namespace land in their
// balloon, and each container's real cgroup (cpuset.cpus) holds what `nriwasm
// simulate` decides for the same configuration and history on this node (the
// agent's own pod first), which puts the workloads on other CPUs than the
// agent's reserved balloon. helm uninstall then leaves no agent pod.
func (w *world) balloons(t *testing.T) {
	ctx := context.Background()
	// What the claim step left: nothing of it may be on the node's CPUs for
	// a policy that has not seen it.
	w.deletePod(t, "beside-claim")
	values := maps.Clone(w.values)
	values["policy"] = map[string]any{"name": "balloons", "config": balloonsConfig}
	values["dra"] = map[string]any{"enabled": false}
	d, err := w.helm(t).Install(ctx, "install", release, namespace, values)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	w.agentPod(t, "")
	w.readyz(t)
	step(t, "balloons: helm install to agent pod Ready", time.Since(t0)+d)

	sc := agent.Scenario{Steps: []agent.ScenarioStep{agentStep}}
	ids := map[string]string{}
	for _, wl := range balloonWorkloads {
		t0 := time.Now()
		pod := w.runPod(t, wl.name, wl.res, nil)
		step(t, "balloons: create to Running: "+string(wl.qos), time.Since(t0))
		ids[wl.name] = containerID(pod)
		sc.Steps = append(sc.Steps, wl.step())
	}
	config, err := json.Marshal(balloonsConfig)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := agent.SimulateWith(ctx, w.bin, "balloons", config, "/sys", t.TempDir(), sc)
	if err != nil {
		t.Fatal(err)
	}
	want := sim.After(-1)
	reserved := want[namespace+"/agent/agent"]
	for _, wl := range balloonWorkloads {
		d, ok := want[workloads+"/"+wl.name+"/main"]
		switch {
		case !ok:
			t.Fatalf("nriwasm simulate has no decision for %s: %+v", wl.name, want)
		case d.Refused != "" || d.CPUs == "":
			t.Fatalf("nriwasm simulate does not place %s in a balloon: %+v", wl.name, d)
		case d.CPUs == reserved.CPUs:
			t.Fatalf("nriwasm simulate puts %s on the reserved balloon's CPUs %s, not its own balloon's", wl.name, d.CPUs)
		}
		var got placement
		w.c.Eventually(t, 30*time.Second, wl.name+"'s cgroup", func(ctx context.Context) (bool, error) {
			got = w.cgroup(ctx, ids[wl.name])
			return got.cpus == d.CPUs, nil
		})
		t.Logf("%s (%s): cgroup cpus %s mems %s; policy: %+v (reserved balloon: %s)", wl.name, wl.qos, got.cpus, got.mems, d, reserved.CPUs)
	}
	for _, wl := range balloonWorkloads {
		w.deletePod(t, wl.name)
	}

	t0 = time.Now()
	if _, err := w.helm(t).Run(ctx, "uninstall", release, "--namespace", namespace, "--wait"); err != nil {
		t.Fatal(err)
	}
	w.c.Eventually(t, 2*time.Minute, "the agent's pods gone", func(ctx context.Context) (bool, error) {
		pods, err := w.c.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=nriwasm"})
		return err == nil && len(pods.Items) == 0, nil
	})
	step(t, "balloons: helm uninstall to nothing left", time.Since(t0))
}
