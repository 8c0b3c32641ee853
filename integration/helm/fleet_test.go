//go:build integration

package helm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/fleet"
	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/integration/kubeapi"
	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// natives are the Go builds of the built-in policies the fleet test runs:
// the same decisions as their .wasm, without compiling a module per node.
var natives = map[string]func() policy.Policy{
	"topology-aware": func() policy.Policy { return topologyaware.New() },
	"balloons":       func() policy.Policy { return balloons.New() },
}

// nativePolicy is a resmgr.Policy running a policy's Go build.
type nativePolicy struct{ *native.Runner }

func (nativePolicy) Rebuilds() uint64            { return 0 }
func (nativePolicy) Discard(context.Context)     {}
func (nativePolicy) Close(context.Context) error { return nil }

func nativeLoader(name string) resmgr.LoadFunc {
	return func(ctx context.Context, restore wasm.RestoreFunc) (resmgr.Policy, error) {
		r, err := native.New(natives[name]())
		if err != nil {
			return nil, err
		}
		if err := restore(ctx, r); err != nil {
			return nil, err
		}
		return nativePolicy{r}, nil
	}
}

// nativeIdentity names a built-in policy as the agent does: its name and
// the digest of its embedded module.
func nativeIdentity(name string) resmgr.Identity {
	module, _ := builtin.Module(name)
	return resmgr.Identity{Reference: name, Name: name, Digest: resmgr.ModuleDigest(module)}
}

// nativeResolve is the agents' resmgr.ResolveFunc: a swap to another
// built-in policy runs its Go build.
func nativeResolve(_ context.Context, cfg *config.Config) (resmgr.Candidate, error) {
	if natives[cfg.Policy.Name] == nil {
		return resmgr.Candidate{}, fmt.Errorf("policy.name: %q has no Go build in this test", cfg.Policy.Name)
	}
	return resmgr.Candidate{Identity: nativeIdentity(cfg.Policy.Name), Load: nativeLoader(cfg.Policy.Name)}, nil
}

// fleetNode is one node's agent: a resource manager and the fleet agent
// feeding it, authenticated as the chart's service account in a pod on the
// node.
type fleetNode struct {
	name string
	m    *resmgr.Manager
	dyn  dynamic.Interface
}

// startFleetNode starts an agent on node as `nriwasm run` does in fleet
// mode: the local file's policy is topology-aware with no configuration;
// the PolicyConfig selecting the node replaces it before the policy loads.
func startFleetNode(t *testing.T, s *kubeapi.Server, ns, sa, node string) *fleetNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rc := agentConfig(t, s, ns, sa, node)
	client := kubernetes.NewForConfigOrDie(rc)
	dyn := dynamic.NewForConfigOrDie(rc)
	cfg := config.Default()
	cfg.Policy.Name = "topology-aware"
	cfg.StateDir = t.TempDir()
	if err := cfg.Complete(cfg.StateDir); err != nil {
		t.Fatal(err)
	}
	sel, err := fleet.Initial(ctx, client, dyn, node)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Chosen != nil {
		fleet.Overlay(cfg, sel.Chosen.Spec.Policy, sel.Chosen.Spec.Config)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	m, err := resmgr.New(ctx, cfg, policytest.Machine(t, "Desktop1Socket"), nativeLoader(cfg.Policy.Name), resmgr.WithNodeName(node), resmgr.WithIdentity(nativeIdentity(cfg.Policy.Name)), resmgr.WithResolve(nativeResolve))
	if err != nil {
		t.Fatalf("node %s: %v", node, err)
	}
	opts := []fleet.Option{fleet.WithRunning(fleet.Running(m))}
	if sel.Chosen != nil {
		opts = append(opts, fleet.WithStarted(sel.Chosen, nil))
	}
	a, err := fleet.New(client, dyn, node, fleet.ManagerApplier(m, nil), opts...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("fleet agent on %s: %v", node, err)
		}
	})
	return &fleetNode{name: node, m: m, dyn: dyn}
}

// policyConfigs is the admin's view of the PolicyConfig objects.
type policyConfigs struct {
	t   *testing.T
	dyn dynamic.ResourceInterface
}

func (p policyConfigs) get(name string) *v1alpha1.PolicyConfig {
	p.t.Helper()
	u, err := p.dyn.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		p.t.Fatalf("get PolicyConfig %s: %v", name, err)
	}
	pc, err := v1alpha1.FromUnstructured(u)
	if err != nil {
		p.t.Fatal(err)
	}
	return pc
}

// put creates or replaces object name's spec.
func (p policyConfigs) put(name, policyName, config string, matchLabels map[string]string) {
	p.t.Helper()
	spec := map[string]any{"policy": policyName}
	if config != "" {
		var c map[string]any
		if err := json.Unmarshal([]byte(config), &c); err != nil {
			p.t.Fatal(err)
		}
		spec["config"] = c
	}
	if matchLabels != nil {
		ml := map[string]any{}
		for k, v := range matchLabels {
			ml[k] = v
		}
		spec["nodeSelector"] = map[string]any{"matchLabels": ml}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.Group + "/" + v1alpha1.Version, "kind": v1alpha1.Kind,
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
	if _, err := p.dyn.Apply(context.Background(), name, u, metav1.ApplyOptions{FieldManager: "fleet-test", Force: true}); err != nil {
		p.t.Fatalf("apply PolicyConfig %s: %v", name, err)
	}
}

// entry returns node's status entry in object name, nil if none.
func (p policyConfigs) entry(name, node string) *v1alpha1.NodeStatus {
	for _, e := range p.get(name).Status.Nodes {
		if e.Node == node {
			return &e
		}
	}
	return nil
}

// waitEntry waits until node's entry in object name satisfies ok.
func (p policyConfigs) waitEntry(name, node string, what string, ok func(*v1alpha1.NodeStatus) bool) *v1alpha1.NodeStatus {
	p.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		e := p.entry(name, node)
		if e != nil && ok(e) {
			return e
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("PolicyConfig %s, node %s: never %s; last entry %+v", name, node, what, e)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// applied is the entry's Applied condition.
func applied(e *v1alpha1.NodeStatus) metav1.Condition {
	for _, c := range e.Conditions {
		if c.Type == v1alpha1.ConditionApplied {
			return c
		}
	}
	return metav1.Condition{}
}

func appliedGeneration(gen int64) func(*v1alpha1.NodeStatus) bool {
	return func(e *v1alpha1.NodeStatus) bool {
		return e.ObservedGeneration == gen && e.AppliedGeneration == gen && applied(e).Status == metav1.ConditionTrue
	}
}

func reason(gen int64, r string) func(*v1alpha1.NodeStatus) bool {
	return func(e *v1alpha1.NodeStatus) bool { return e.ObservedGeneration == gen && applied(e).Reason == r }
}

// TestFleetNodeGroups: with the chart's CRD, RBAC, admission policy and
// default object, three agents on a real API server — two node groups with
// different policies and configurations and a node in neither — run what
// selects their node, report it in status, follow a change of their group
// only, keep the last good configuration on a bad one (reported with the
// field), swap to another policy live, report a node in two groups as a
// conflict naming both, and may not write another node's entry.
func TestFleetNodeGroups(t *testing.T) {
	s := kubeapi.Shared(t)
	h := newHelm(t, s)
	ctx := context.Background()
	ns := s.Namespace(t)
	const release = "fleet"
	fullname := release + "-nriwasm"
	h.run(t, "install", release, h.chart, "--namespace", ns, "--set", "fleet.enabled=true", "--set", "dra.enabled=false",
		"--set", "policy.name=topology-aware", "--set-json", `policy.config={"reservedResources":{"cpu":"1"}}`)
	t.Cleanup(func() {
		if out, err := h.try("uninstall", release, "--namespace", ns); err != nil {
			t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	})
	pcs := policyConfigs{t, dynamic.NewForConfigOrDie(s.Config()).Resource(v1alpha1.GroupVersionResource)}
	if got := pcs.get(v1alpha1.DefaultName).Spec; got.Policy != "topology-aware" || string(got.Config) != `{"reservedResources":{"cpu":"1"}}` {
		t.Fatalf("the chart's default PolicyConfig: %s %s", got.Policy, got.Config)
	}
	fastConfig := `{"reservedResources":{"cpu":"2"}}`
	// As the API server stores them: keys sorted.
	batchConfig := `{"balloonTypes":[{"minCPUs":1,"name":"batch"}],"reservedResources":{"cpu":"1"}}`
	pcs.put("fast", "topology-aware", fastConfig, map[string]string{v1alpha1.GroupLabel: "fast"})
	pcs.put("batch", "balloons", batchConfig, map[string]string{v1alpha1.GroupLabel: "batch"})
	t.Cleanup(func() {
		for _, name := range []string{"fast", "batch", "extra"} {
			if err := pcs.dyn.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete PolicyConfig %s: %v", name, err)
			}
		}
	})

	nodes := map[string]string{"fast": s.UniqueName("fleet-fast"), "batch": s.UniqueName("fleet-batch"), "none": s.UniqueName("fleet-none")}
	for group, name := range nodes {
		n := s.CreateNode(t, name)
		if group != "none" {
			n.Labels[v1alpha1.GroupLabel] = group
			if _, err := s.Client().CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	fast := startFleetNode(t, s, ns, fullname, nodes["fast"])
	batch := startFleetNode(t, s, ns, fullname, nodes["batch"])
	none := startFleetNode(t, s, ns, fullname, nodes["none"])

	// Each node runs its group's policy and configuration, or the default.
	for _, c := range []struct {
		n              *fleetNode
		object, policy string
		config         string
	}{
		{fast, "fast", "topology-aware", fastConfig},
		{batch, "batch", "balloons", batchConfig},
		{none, v1alpha1.DefaultName, "topology-aware", `{"reservedResources":{"cpu":"1"}}`},
	} {
		e := pcs.waitEntry(c.object, c.n.name, "applied generation 1", appliedGeneration(1))
		if id := nativeIdentity(c.policy); e.Policy != c.policy || e.PolicyDigest != id.Digest {
			t.Errorf("%s's entry in %s: policy %s %s, want %s %s", c.n.name, c.object, e.Policy, e.PolicyDigest, c.policy, id.Digest)
		}
		if got := c.n.m.Config(); got.Policy.Name != c.policy || string(got.Policy.Data) != c.config {
			t.Errorf("node %s runs %s %s, want %s %s", c.n.name, got.Policy.Name, got.Policy.Data, c.policy, c.config)
		}
	}

	// kubectl get: the printer columns.
	checkPrinterColumns(t, s, "fast", map[string]string{"Policy": "topology-aware", "Nodes": nodes["fast"], "Applied": v1alpha1.ReasonApplied})

	// A change of the fast group reaches its node only.
	batchBefore := pcs.entry("batch", batch.name)
	newFast := `{"reservedResources":{"cpu":"3"}}`
	pcs.put("fast", "topology-aware", newFast, map[string]string{v1alpha1.GroupLabel: "fast"})
	pcs.waitEntry("fast", fast.name, "applied generation 2", appliedGeneration(2))
	if got := string(fast.m.Config().Policy.Data); got != newFast {
		t.Errorf("fast node runs %s after the change, want %s", got, newFast)
	}
	if got := string(batch.m.Config().Policy.Data); got != batchConfig {
		t.Errorf("batch node runs %s after the fast group's change, want %s", got, batchConfig)
	}
	if after := pcs.entry("batch", batch.name); fmt.Sprint(after) != fmt.Sprint(batchBefore) {
		t.Errorf("batch node's entry changed with the fast group: %+v → %+v", batchBefore, after)
	}

	// A bad configuration: reported with the field; the last good one runs.
	pcs.put("fast", "topology-aware", `{"reservedResources":{"cpu":"3"},"bogus":1}`, map[string]string{v1alpha1.GroupLabel: "fast"})
	e := pcs.waitEntry("fast", fast.name, "refused generation 3", reason(3, v1alpha1.ReasonInvalid))
	if msg := applied(e).Message; !strings.Contains(msg, "bogus") || e.AppliedGeneration != 2 {
		t.Errorf("the bad configuration's entry: applied generation %d, message %q; want 2 and the field bogus named", e.AppliedGeneration, msg)
	}
	if got := string(fast.m.Config().Policy.Data); got != newFast {
		t.Errorf("fast node runs %s after a bad configuration, want the last good %s", got, newFast)
	}

	// Another policy: swapped to live, the new policy and digest reported.
	pcs.put("batch", "topology-aware", "", map[string]string{v1alpha1.GroupLabel: "batch"})
	e = pcs.waitEntry("batch", batch.name, "applied generation 2", appliedGeneration(2))
	if id := nativeIdentity("topology-aware"); e.Policy != id.Name || e.PolicyDigest != id.Digest {
		t.Errorf("the batch node's entry after the policy change: %s %s, want %s %s", e.Policy, e.PolicyDigest, id.Name, id.Digest)
	}
	if got := batch.m.Config().Policy.Name; got != "topology-aware" {
		t.Errorf("batch node runs %s after the policy change, want topology-aware", got)
	}

	// A node two groups select: refused, both objects say which.
	pcs.put("extra", "balloons", "", map[string]string{"zone": "a"})
	n, err := s.Client().CoreV1().Nodes().Get(ctx, none.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels["zone"] = "a"
	n.Labels[v1alpha1.GroupLabel] = "fast"
	if _, err := s.Client().CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, object := range []string{"fast", "extra"} {
		e := pcs.waitEntry(object, none.name, "a conflict", func(e *v1alpha1.NodeStatus) bool { return applied(e).Reason == v1alpha1.ReasonConflict })
		if msg := applied(e).Message; !strings.Contains(msg, "extra and fast") {
			t.Errorf("the conflict's message in %s: %q, want both objects named", object, msg)
		}
	}
	if got := none.m.Config(); got.Policy.Name != "topology-aware" || string(got.Policy.Data) != `{"reservedResources":{"cpu":"1"}}` {
		t.Errorf("the node in two groups runs %s %s, want the default's still", got.Policy.Name, got.Policy.Data)
	}
	// It left the default object, so its entry there is gone.
	deadline := time.Now().Add(time.Minute)
	for pcs.entry(v1alpha1.DefaultName, none.name) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("node %s's entry stayed in the default PolicyConfig after it left", none.name)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Another node's entry is out of reach: the admission policy refuses
	// the fast node's agent a write to the batch node's entry, and RBAC
	// refuses it the spec.
	forged, err := v1alpha1.StatusApply("batch", &v1alpha1.NodeStatus{Node: batch.name, ObservedGeneration: 99})
	if err != nil {
		t.Fatal(err)
	}
	// A new admission policy takes effect a moment after it is created:
	// dry-run until it refuses, then write for real.
	refusal := "may change only its own node's entry"
	start := time.Now()
	for {
		_, err = fast.dyn.Resource(v1alpha1.GroupVersionResource).ApplyStatus(ctx, "batch", forged,
			metav1.ApplyOptions{FieldManager: v1alpha1.FieldManager(batch.name), Force: true, DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), refusal) {
			break
		}
		if time.Since(start) > time.Minute {
			vap, _ := s.Client().AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, fullname+"-own-node-status", metav1.GetOptions{})
			t.Fatalf("the admission policy never refused the fast node's agent the batch node's entry (last answer: %v; policy status %+v)", err, vap.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("FIGURE the fleet admission policy in force %v after the check began", time.Since(start))
	_, err = fast.dyn.Resource(v1alpha1.GroupVersionResource).ApplyStatus(ctx, "batch", forged, metav1.ApplyOptions{FieldManager: v1alpha1.FieldManager(batch.name), Force: true})
	if err == nil || !strings.Contains(err.Error(), refusal) {
		t.Errorf("the fast node's agent writing the batch node's entry: %v, want refused by the admission policy", err)
	}
	if got := pcs.entry("batch", batch.name); got == nil || got.ObservedGeneration == 99 {
		t.Errorf("the batch node's entry after the refused write: %+v", got)
	}
	_, err = fast.dyn.Resource(v1alpha1.GroupVersionResource).Patch(ctx, "batch", types.MergePatchType, []byte(`{"spec":{"policy":"conformance"}}`), metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the agent patching a PolicyConfig's spec: %v, want forbidden", err)
	}
}

// checkPrinterColumns reads object name as kubectl get does (a Table) and
// checks the cells of the columns named in want.
func checkPrinterColumns(t *testing.T, s *kubeapi.Server, name string, want map[string]string) {
	t.Helper()
	c := kubernetes.NewForConfigOrDie(s.Config())
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/apis", v1alpha1.Group, v1alpha1.Version, v1alpha1.Resource, name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("get PolicyConfig %s as a table: %v", name, err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("table of %s: %d rows", name, len(table.Rows))
	}
	var header []string
	for i, col := range table.ColumnDefinitions {
		header = append(header, col.Name)
		if w, ok := want[col.Name]; ok {
			if got := fmt.Sprint(table.Rows[0].Cells[i]); got != w {
				t.Errorf("column %s of %s: %q, want %q", col.Name, name, got, w)
			}
			delete(want, col.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("columns %v missing from %v", want, header)
	}
	t.Logf("kubectl get policyconfig %s: %v %v", name, header, table.Rows[0].Cells)
}
