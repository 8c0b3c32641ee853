//go:build integration

// Package helm_test installs, upgrades and uninstalls the chart
// (charts/nriwasm) with the helm CLI against a real kube-apiserver
// (integration/kubeapi), and checks that the RBAC and the admission policy
// it installs hold the agent's service account to its own node.
package helm_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nriwasm/nriwasm/integration/kubeapi"
)

func TestMain(m *testing.M) { os.Exit(kubeapi.Main(m)) }

// draObjects gets each cluster-scoped DRA object a release installs; each
// answers nil or an error.
func draObjects(c kubernetes.Interface, fullname, driver string) map[string]func(context.Context) error {
	return map[string]func(context.Context) error{
		"ClusterRole": func(ctx context.Context) error {
			_, err := c.RbacV1().ClusterRoles().Get(ctx, fullname+"-dra", metav1.GetOptions{})
			return err
		},
		"ClusterRoleBinding": func(ctx context.Context) error {
			_, err := c.RbacV1().ClusterRoleBindings().Get(ctx, fullname+"-dra", metav1.GetOptions{})
			return err
		},
		"ValidatingAdmissionPolicy": func(ctx context.Context) error {
			_, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, fullname+"-own-node-slices", metav1.GetOptions{})
			return err
		},
		"ValidatingAdmissionPolicyBinding": func(ctx context.Context) error {
			_, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, fullname+"-own-node-slices", metav1.GetOptions{})
			return err
		},
		"DeviceClass": func(ctx context.Context) error {
			_, err := c.ResourceV1().DeviceClasses().Get(ctx, driver, metav1.GetOptions{})
			return err
		},
	}
}

// TestInstallUpgradeUninstall: helm install passes the chart's kubeVersion
// check and creates every object; an upgrade changes the configuration and
// rolls the pods' template, another turns DRA off and removes its objects;
// uninstall removes everything.
func TestInstallUpgradeUninstall(t *testing.T) {
	s := kubeapi.Shared(t)
	h := newHelm(t, s)
	c := s.Client()
	ctx := context.Background()
	ns := s.Namespace(t)
	const release = "lifecycle"
	fullname, domain := release+"-nriwasm", "lifecycle.example.com"
	driver := "topology-aware." + domain

	start := time.Now()
	out := h.run(t, "install", release, h.chart, "--namespace", ns, "--values", valuesFile(t, map[string]any{"dra": map[string]any{"domain": domain}}))
	t.Logf("FIGURE helm install: %v", time.Since(start))
	for _, want := range []string{"STATUS: deployed", "DaemonSet " + fullname, "driver " + driver} {
		if !strings.Contains(out, want) {
			t.Errorf("helm install output lacks %q:\n%s", want, out)
		}
	}
	ds, err := c.AppsV1().DaemonSets(ns).Get(ctx, fullname, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("DaemonSet: %v", err)
	}
	if _, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, fullname, metav1.GetOptions{}); err != nil {
		t.Errorf("ServiceAccount: %v", err)
	}
	for kind, get := range draObjects(c, fullname, driver) {
		if err := get(ctx); err != nil {
			t.Errorf("%s after install: %v", kind, err)
		}
	}
	role, err := c.RbacV1().ClusterRoles().Get(ctx, fullname+"-dra", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := kubeapi.DriverClusterRole("x", driver)
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(role.Rules, want.Rules) {
		t.Errorf("the installed ClusterRole's rules differ from kubeapi.DriverClusterRole:\n%+v\n%+v", role.Rules, want.Rules)
	}

	// A configuration change: the plugin index (a restart) and the policy's
	// configuration (live).
	h.run(t, "upgrade", release, h.chart, "--namespace", ns, "--reuse-values", "--values",
		valuesFile(t, map[string]any{"nri": map[string]any{"pluginIndex": 42}, "policy": map[string]any{"config": map[string]any{"reservedCPUs": "0-1"}}}))
	cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, fullname, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`pluginIndex: "42"`, "reservedCPUs: 0-1", "domain: " + domain} {
		if !strings.Contains(cm.Data["config.yaml"], want) {
			t.Errorf("config after upgrade lacks %q:\n%s", want, cm.Data["config.yaml"])
		}
	}
	ds2, err := c.AppsV1().DaemonSets(ns).Get(ctx, fullname, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const restart = "nriwasm.io/restart-config"
	if ds2.Spec.Template.Annotations[restart] == ds.Spec.Template.Annotations[restart] {
		t.Errorf("the pod template's %s did not change with the plugin index", restart)
	}

	// DRA off: its objects go.
	h.run(t, "upgrade", release, h.chart, "--namespace", ns, "--reuse-values", "--set", "dra.enabled=false")
	for kind, get := range draObjects(c, fullname, driver) {
		if !gone(t, kind, get) {
			t.Errorf("%s still there with dra.enabled=false", kind)
		}
	}
	ds3, err := c.AppsV1().DaemonSets(ns).Get(ctx, fullname, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ds3.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "POD_UID" {
			t.Error("POD_UID still set with DRA off")
		}
	}
	if out := h.run(t, "history", release, "--namespace", ns); strings.Count(out, "\n") != 4 {
		t.Errorf("helm history, want 3 revisions:\n%s", out)
	}

	h.run(t, "uninstall", release, "--namespace", ns)
	for what, get := range map[string]func(context.Context) error{
		"DaemonSet": func(ctx context.Context) error {
			_, err := c.AppsV1().DaemonSets(ns).Get(ctx, fullname, metav1.GetOptions{})
			return err
		},
		"ConfigMap": func(ctx context.Context) error {
			_, err := c.CoreV1().ConfigMaps(ns).Get(ctx, fullname, metav1.GetOptions{})
			return err
		},
		"ServiceAccount": func(ctx context.Context) error {
			_, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, fullname, metav1.GetOptions{})
			return err
		},
	} {
		if !gone(t, what, get) {
			t.Errorf("%s still there after uninstall", what)
		}
	}
	if out, err := h.try("status", release, "--namespace", ns); err == nil {
		t.Errorf("helm status after uninstall succeeded:\n%s", out)
	}
}

func slice(driver, name, node string) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   driver,
			Pool:     resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
			Devices:  []resourcev1.Device{{Name: "cpudevnuma000"}},
		},
	}
}

// TestChartLimitsTheAgentToItsNode: with the chart's objects alone, the
// agent's service account in a pod on node A writes A's ResourceSlices of
// its driver and is refused B's and another driver's; it may write claim status only through the
// associated-node verbs of its own driver.
func TestChartLimitsTheAgentToItsNode(t *testing.T) {
	s := kubeapi.Shared(t)
	h := newHelm(t, s)
	admin := s.Client()
	ctx := context.Background()
	ns := s.Namespace(t)
	const release = "slices"
	fullname, domain := release+"-nriwasm", "slices.example.com"
	driver := "topology-aware." + domain
	h.run(t, "install", release, h.chart, "--namespace", ns, "--set", "dra.enabled=true", "--set", "dra.domain="+domain)
	t.Cleanup(func() {
		if out, err := h.try("uninstall", release, "--namespace", ns); err != nil {
			t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	})
	nodeA, nodeB := s.UniqueName("chart-node-a"), s.UniqueName("chart-node-b")
	s.CreateNode(t, nodeA)
	s.CreateNode(t, nodeB)
	agent := kubernetes.NewForConfigOrDie(agentConfig(t, s, ns, fullname, nodeA))
	slices := agent.ResourceV1().ResourceSlices()

	// A new policy takes effect a moment after it is created: dry-run until
	// it refuses.
	refusal := "may not write a ResourceSlice of node " + nodeB
	start := time.Now()
	for {
		_, err := slices.Create(ctx, slice(driver, nodeB+"-probe", nodeB), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), refusal) {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("the chart's policy never refused node %s's slice (last answer: %v)", nodeB, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("FIGURE the chart's admission policy in force %v after install", time.Since(start))

	refused := func(what string, err error, want string) {
		t.Helper()
		if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want refused with %q", what, err, want)
		}
	}
	mine, err := slices.Create(ctx, slice(driver, nodeA+"-slice", nodeA), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating its own node's slice: %v", err)
	}
	_, err = slices.Create(ctx, slice(driver, nodeB+"-slice", nodeB), metav1.CreateOptions{})
	refused("creating another node's slice", err, refusal)
	mine.Spec.Pool.Generation++
	if mine, err = slices.Update(ctx, mine, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating its own node's slice: %v", err)
	}
	theirs, err := admin.ResourceV1().ResourceSlices().Create(ctx, slice(driver, nodeB+"-admin", nodeB), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("admin creating node %s's slice: %v", nodeB, err)
	}
	theirs.Spec.Pool.Generation++
	_, err = slices.Update(ctx, theirs, metav1.UpdateOptions{})
	refused("updating another node's slice", err, refusal)
	err = slices.Delete(ctx, theirs.Name, metav1.DeleteOptions{})
	refused("deleting another node's slice", err, "may not change a ResourceSlice of node "+nodeB)
	// Its own node, another driver's slice: refused too.
	other := "other." + domain
	_, err = slices.Create(ctx, slice(other, nodeA+"-other", nodeA), metav1.CreateOptions{})
	refused("creating its node's slice of another driver", err, "may not write a ResourceSlice of driver "+other)
	if err := slices.Delete(ctx, mine.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting its own slice: %v", err)
	}
	if err := admin.ResourceV1().ResourceSlices().Delete(ctx, theirs.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("admin deleting %s: %v", theirs.Name, err)
	}

	// Claim status: only this driver's entries, only for the pod's node.
	user := fmt.Sprintf("system:serviceaccount:%s:%s", ns, fullname)
	for _, c := range []struct {
		verb, name string
		allowed    bool
	}{
		{"associated-node:patch", driver, true},
		{"associated-node:update", driver, true},
		{"arbitrary-node:patch", driver, false},
		{"associated-node:patch", "other.example.com", false},
	} {
		review, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "resource.k8s.io", Resource: "resourceclaims", Subresource: "driver", Verb: c.verb, Name: c.name},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != c.allowed {
			t.Errorf("%s resourceclaims/driver %s: allowed %v, want %v (%s)", c.verb, c.name, review.Status.Allowed, c.allowed, review.Status.Reason)
		}
	}
}
