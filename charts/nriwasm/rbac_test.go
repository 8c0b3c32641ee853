package chart_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// rbacDir holds the RBAC and admission policy the integration suite tests
// against a real API server (integration/kubeapi); the chart must grant
// exactly the same.
var rbacDir = filepath.Join("..", "..", "integration", "kubeapi", "rbac")

// fromIntegration fills in one of rbacDir's templates as integration/kubeapi
// does and decodes its documents strictly into objs.
func fromIntegration(t *testing.T, file string, values map[string]string, objs ...any) {
	t.Helper()
	tmpl, err := template.New(file).Option("missingkey=error").ParseFiles(filepath.Join(rbacDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, values); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(buf.String(), "\n---\n")
	if len(docs) != len(objs) {
		t.Fatalf("%s: %d documents, want %d", file, len(docs), len(objs))
	}
	for i, doc := range docs {
		if err := yaml.UnmarshalStrict([]byte(doc), objs[i]); err != nil {
			t.Fatalf("%s, document %d: %v", file, i+1, err)
		}
	}
}

// TestRBACMatchesIntegration: the chart's ClusterRole has the rules of
// integration/kubeapi/rbac/driver-clusterrole.yaml for its driver, bound to
// its service account; the admission policy and binding are those of
// resourceslice-policy.yaml for that service account — for the default and
// a renamed release in another namespace.
func TestRBACMatchesIntegration(t *testing.T) {
	for _, c := range []struct {
		name, release, namespace, serviceAccount, driver string
		values                                           map[string]any
	}{
		{name: "defaults", serviceAccount: "nriwasm", driver: "topology-aware.nri.io"},
		{name: "renamed", serviceAccount: "agent", driver: "balloons.example.com", values: map[string]any{
			"fullnameOverride": "node-agent", "serviceAccount": map[string]any{"name": "agent"},
			"policy": map[string]any{"name": "balloons"}, "dra": map[string]any{"enabled": true, "domain": "example.com"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustRender(t, c.values)
			var role rbacv1.ClusterRole
			fromIntegration(t, "driver-clusterrole.yaml", map[string]string{"Name": "x", "Driver": c.driver}, &role)
			if !apiequality.Semantic.DeepEqual(r.clusterRole.Rules, role.Rules) {
				t.Errorf("ClusterRole rules differ from %s:\nchart: %+v\nwant:  %+v", rbacDir, r.clusterRole.Rules, role.Rules)
			}
			for _, rule := range r.clusterRole.Rules {
				for _, v := range rule.Verbs {
					if strings.HasPrefix(v, "arbitrary-node:") || v == "*" {
						t.Errorf("rule %+v grants %q", rule, v)
					}
				}
			}
			b := r.binding
			if b.RoleRef.Name != r.clusterRole.Name || len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.ServiceAccountKind ||
				b.Subjects[0].Name != c.serviceAccount || b.Subjects[0].Namespace != namespace || r.serviceAccount.Name != c.serviceAccount {
				t.Errorf("ClusterRoleBinding %+v, ServiceAccount %q: want %s bound to service account %s/%s", b, r.serviceAccount.Name, r.clusterRole.Name, namespace, c.serviceAccount)
			}
			var policy admissionv1.ValidatingAdmissionPolicy
			var binding admissionv1.ValidatingAdmissionPolicyBinding
			fromIntegration(t, "resourceslice-policy.yaml", map[string]string{"Name": r.policy.Name, "Namespace": namespace, "ServiceAccount": c.serviceAccount, "Driver": c.driver}, &policy, &binding)
			if !apiequality.Semantic.DeepEqual(r.policy.Spec, policy.Spec) {
				t.Errorf("ValidatingAdmissionPolicy differs from %s:\nchart: %+v\nwant:  %+v", rbacDir, r.policy.Spec, policy.Spec)
			}
			if !apiequality.Semantic.DeepEqual(r.policyBinding.Spec, binding.Spec) {
				t.Errorf("ValidatingAdmissionPolicyBinding differs:\nchart: %+v\nwant:  %+v", r.policyBinding.Spec, binding.Spec)
			}
		})
	}
}
