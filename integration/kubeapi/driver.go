//go:build integration

package kubeapi

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"strings"
	"testing"
	"text/template"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// DriverNamespace holds the drivers' service accounts and pods.
const DriverNamespace = "nriwasm-system"

// NodeNameExtra is the user-info extra in which the API server names the
// node of the pod a service-account token is bound to.
const NodeNameExtra = "authentication.kubernetes.io/node-name"

//go:embed rbac/*.yaml
var rbacFiles embed.FS

// DriverClusterRole is the ClusterRole a driver's service account holds,
// from rbac/driver-clusterrole.yaml: claims get; claims' status patch and
// update; the synthetic resourceclaims/driver subresource named driver with
// associated-node:patch and :update; nodes get; resourceslices all verbs.
func DriverClusterRole(name, driver string) (*rbacv1.ClusterRole, error) {
	var role rbacv1.ClusterRole
	if err := render("rbac/driver-clusterrole.yaml", map[string]string{"Name": name, "Driver": driver}, &role); err != nil {
		return nil, err
	}
	return &role, nil
}

// SlicePolicy is the ValidatingAdmissionPolicy and its binding, from
// rbac/resourceslice-policy.yaml, that limit namespace/serviceAccount to the
// ResourceSlices of driver on the node its pod runs on.
func SlicePolicy(name, namespace, serviceAccount, driver string) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding, error) {
	var policy admissionv1.ValidatingAdmissionPolicy
	var binding admissionv1.ValidatingAdmissionPolicyBinding
	if err := render("rbac/resourceslice-policy.yaml", map[string]string{"Name": name, "Namespace": namespace, "ServiceAccount": serviceAccount, "Driver": driver}, &policy, &binding); err != nil {
		return nil, nil, err
	}
	return &policy, &binding, nil
}

// render fills in a template from rbac/ and decodes its YAML documents into
// objs, strictly (an unknown field is an error).
func render(file string, values map[string]string, objs ...any) error {
	tmpl, err := template.New(file).Option("missingkey=error").ParseFS(rbacFiles, file)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", file, err)
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, strings.TrimPrefix(file, "rbac/"), values); err != nil {
		return fmt.Errorf("rendering %s: %w", file, err)
	}
	docs := strings.Split(buf.String(), "\n---\n")
	if len(docs) != len(objs) {
		return fmt.Errorf("%s: %d YAML documents, want %d", file, len(docs), len(objs))
	}
	for i, doc := range docs {
		if err := yaml.UnmarshalStrict([]byte(doc), objs[i]); err != nil {
			return fmt.Errorf("%s, document %d: %w", file, i+1, err)
		}
	}
	return nil
}

// driverSetup is what InstallDriver created for one driver.
type driverSetup struct {
	serviceAccount string
}

// InstallDriver sets driver up as the Helm chart does: a service account
// in DriverNamespace, named after the driver, bound to DriverClusterRole,
// and SlicePolicy for it. It waits until the policy refuses a write for
// another node (policies take effect a moment after they are created).
// It does this once per server and driver name; further calls return at
// once.
func (s *Server) InstallDriver(t testing.TB, driver string) {
	t.Helper()
	if _, err := s.installDriver(driver); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) installDriver(driver string) (*driverSetup, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.drivers[driver]; d != nil {
		return d, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := s.client
	d := &driverSetup{serviceAccount: driver}
	name := "nriwasm-driver:" + driver
	role, err := DriverClusterRole(name, driver)
	if err != nil {
		return nil, err
	}
	policyName := "nriwasm-own-node-slices." + driver
	policy, binding, err := SlicePolicy(policyName, DriverNamespace, d.serviceAccount, driver)
	if err != nil {
		return nil, err
	}
	if err := ignoreExists(c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DriverNamespace}}, metav1.CreateOptions{})); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", DriverNamespace, err)
	}
	if _, err := c.CoreV1().ServiceAccounts(DriverNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: d.serviceAccount}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating service account %s: %w", d.serviceAccount, err)
	}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating ClusterRole %s: %w", name, err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: DriverNamespace, Name: d.serviceAccount}},
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating ClusterRoleBinding %s: %w", name, err)
	}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating ValidatingAdmissionPolicy %s: %w", policyName, err)
	}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating ValidatingAdmissionPolicyBinding %s: %w", policyName, err)
	}
	if err := s.waitForSlicePolicy(ctx, driver, d); err != nil {
		return nil, err
	}
	s.drivers[driver] = d
	return d, nil
}

// waitForSlicePolicy impersonates the driver's service account on a node
// and dry-runs a ResourceSlice for another node until the policy refuses it.
func (s *Server) waitForSlicePolicy(ctx context.Context, driver string, d *driverSetup) error {
	cfg := s.Config()
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + DriverNamespace + ":" + d.serviceAccount,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + DriverNamespace, "system:authenticated"},
		Extra:    map[string][]string{NodeNameExtra: {"nriwasm-probe-a"}},
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("impersonating client: %w", err)
	}
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "nriwasm-policy-probe"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   driver,
			Pool:     resourcev1.ResourcePool{Name: "nriwasm-probe-b", ResourceSliceCount: 1},
			NodeName: ptr.To("nriwasm-probe-b"),
		},
	}
	var last error
	for {
		_, last = c.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if last != nil && strings.Contains(last.Error(), "may not write a ResourceSlice of node nriwasm-probe-b") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the ResourceSlice policy for %s never took effect (last answer: %v)", driver, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DriverConfig returns a configuration authenticated as driver's service
// account (InstallDriver) running in a pod on node: it creates that pod
// (bound to node, never started: there is no kubelet) and a token bound to
// it, so the API server knows the node (NodeNameExtra), as it does for a
// real driver pod. It checks that with a SelfSubjectReview. The node must
// exist (CreateNode). The pod is deleted when the test ends, which
// invalidates the token.
func (s *Server) DriverConfig(t testing.TB, node, driver string) *rest.Config {
	t.Helper()
	d, err := s.installDriver(driver)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := s.client
	if _, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil {
		t.Fatalf("driver client on node %s: %v (create the node first)", node, err)
	}
	pod, err := c.CoreV1().Pods(DriverNamespace).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "driver-", Namespace: DriverNamespace},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			ServiceAccountName:           d.serviceAccount,
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "driver", Image: "nriwasm.invalid/driver:test"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the driver pod on %s: %v", node, err)
	}
	t.Cleanup(func() {
		err := c.CoreV1().Pods(DriverNamespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting driver pod %s: %v", pod.Name, err)
		}
	})
	tr, err := c.CoreV1().ServiceAccounts(DriverNamespace).CreateToken(ctx, d.serviceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To[int64](3600),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s bound to pod %s: %v", d.serviceAccount, pod.Name, err)
	}
	cfg := &rest.Config{
		Host:            s.URL,
		BearerToken:     tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.pki.caPEM},
		QPS:             -1,
		Burst:           -1,
	}
	dc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := dc.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview as the driver: %v", err)
	}
	if got := review.Status.UserInfo.Extra[NodeNameExtra]; len(got) != 1 || got[0] != node {
		t.Fatalf("driver token's %s = %v, want [%s]", NodeNameExtra, got, node)
	}
	return cfg
}

// DriverClient is DriverConfig as a clientset.
func (s *Server) DriverClient(t testing.TB, node, driver string) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(s.DriverConfig(t, node, driver))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ignoreExists[T any](_ T, err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
