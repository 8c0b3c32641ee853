package chart_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
)

// TestFleetOffByDefault: without fleet.enabled nothing of fleet mode is
// rendered and the agent reads its policy from the ConfigMap.
func TestFleetOffByDefault(t *testing.T) {
	r := mustRender(t, nil)
	if r.policyConfig != nil || r.fleetRole != nil || r.fleetBinding != nil || r.fleetPolicy != nil || r.fleetPolicyBinding != nil {
		t.Errorf("fleet objects rendered with fleet.enabled unset")
	}
	if r.config.Fleet.Enabled {
		t.Errorf("config.yaml has fleet.enabled true:\n%s", r.configYAML)
	}
}

// TestFleet: fleet.enabled renders the default PolicyConfig from the policy
// values, the RBAC (read PolicyConfigs and nodes, patch status only), the
// admission policy matching the agent's service account, and turns fleet
// mode on in the agent's configuration.
func TestFleet(t *testing.T) {
	r := mustRender(t, map[string]any{
		"fleet":  map[string]any{"enabled": true},
		"dra":    map[string]any{"enabled": false},
		"policy": map[string]any{"name": "balloons", "config": map[string]any{"reservedResources": map[string]any{"cpu": "1"}}},
	})
	if !r.config.Fleet.Enabled {
		t.Errorf("config.yaml lacks fleet.enabled:\n%s", r.configYAML)
	}
	pc := r.policyConfig
	if pc == nil || pc.Name != v1alpha1.DefaultName || pc.Spec.Policy != "balloons" || string(pc.Spec.Config) != `{"reservedResources":{"cpu":"1"}}` || pc.Spec.NodeSelector != nil {
		t.Fatalf("default PolicyConfig: %+v", pc)
	}
	if r.fleetRole == nil || r.fleetBinding == nil || r.fleetPolicy == nil || r.fleetPolicyBinding == nil {
		t.Fatal("fleet RBAC or admission policy missing")
	}
	var rules []string
	for _, rule := range r.fleetRole.Rules {
		rules = append(rules, strings.Join(rule.Resources, ",")+":"+strings.Join(rule.Verbs, ","))
	}
	want := []string{"policyconfigs:get,list,watch", "policyconfigs/status:patch", "nodes:get,list,watch"}
	if !slices.Equal(rules, want) {
		t.Errorf("fleet ClusterRole rules %v, want %v", rules, want)
	}
	if s := r.fleetBinding.Subjects; len(s) != 1 || s[0].Name != r.serviceAccount.Name || r.fleetBinding.RoleRef.Name != r.fleetRole.Name {
		t.Errorf("fleet binding %+v does not bind the agent's service account to %s", r.fleetBinding, r.fleetRole.Name)
	}
	mc := r.fleetPolicy.Spec.MatchConditions
	if len(mc) != 1 || !strings.Contains(mc[0].Expression, "system:serviceaccount:"+namespace+":"+r.serviceAccount.Name) {
		t.Errorf("admission policy match conditions %+v do not name the agent's service account", mc)
	}
	if rr := r.fleetPolicy.Spec.MatchConstraints.ResourceRules; len(rr) != 1 || !slices.Equal(rr[0].Resources, []string{"policyconfigs/status"}) {
		t.Errorf("admission policy matches %+v, want policyconfigs/status", rr)
	}
	if r.fleetPolicyBinding.Spec.PolicyName != r.fleetPolicy.Name {
		t.Errorf("admission policy binding names %s, want %s", r.fleetPolicyBinding.Spec.PolicyName, r.fleetPolicy.Name)
	}
	// Without the default object, or the admission policy, when asked.
	r = mustRender(t, map[string]any{"fleet": map[string]any{"enabled": true, "createDefault": false, "ownNodeStatusPolicy": false}, "dra": map[string]any{"enabled": false}})
	if r.policyConfig != nil || r.fleetPolicy != nil || r.fleetPolicyBinding != nil || r.fleetRole == nil {
		t.Errorf("createDefault/ownNodeStatusPolicy false: default %v, policy %v, role %v", r.policyConfig != nil, r.fleetPolicy != nil, r.fleetRole != nil)
	}
}

// TestFleetRejects: the default object cannot carry what the CRD refuses
// (an OCI tag is refused by values.schema.json already).
func TestFleetRejects(t *testing.T) {
	for _, c := range []struct {
		name   string
		policy map[string]any
		want   string
	}{
		{"a string configuration", map[string]any{"name": "balloons", "config": "reservedResources: {cpu: 1}"}, "policy.config: with fleet.enabled it must be a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(t, map[string]any{"fleet": map[string]any{"enabled": true}, "dra": map[string]any{"enabled": false}, "policy": c.policy})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestCRD: crds/policyconfigs.yaml decodes strictly as a CRD of the kind
// host/fleet/v1alpha1 names, with status as a subresource, the node list a
// map keyed by node, and the printer columns docs/fleet.md shows.
func TestCRD(t *testing.T) {
	data, err := os.ReadFile("crds/policyconfigs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatal(err)
	}
	if crd.Name != v1alpha1.Resource+"."+v1alpha1.Group || crd.Spec.Names.Kind != v1alpha1.Kind || crd.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Fatalf("CRD %s: kind %s, scope %s", crd.Name, crd.Spec.Names.Kind, crd.Spec.Scope)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != v1alpha1.Version {
		t.Fatalf("CRD versions %+v, want only %s", crd.Spec.Versions, v1alpha1.Version)
	}
	v := crd.Spec.Versions[0]
	if v.Subresources == nil || v.Subresources.Status == nil {
		t.Error("status is not a subresource")
	}
	nodes := v.Schema.OpenAPIV3Schema.Properties["status"].Properties["nodes"]
	if nodes.XListType == nil || *nodes.XListType != "map" || !slices.Equal(nodes.XListMapKeys, []string{"node"}) {
		t.Errorf("status.nodes is not a list-map keyed by node: %v %v", nodes.XListType, nodes.XListMapKeys)
	}
	cfg := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["config"]
	if cfg.XPreserveUnknownFields == nil || !*cfg.XPreserveUnknownFields || cfg.XEmbeddedResource {
		t.Errorf("spec.config: preserve-unknown-fields %v, embedded-resource %v", cfg.XPreserveUnknownFields, cfg.XEmbeddedResource)
	}
	var columns []string
	for _, c := range v.AdditionalPrinterColumns {
		columns = append(columns, c.Name)
	}
	if want := []string{"Policy", "Nodes", "Applied", "Age"}; !slices.Equal(columns, want) {
		t.Errorf("printer columns %v, want %v", columns, want)
	}
}
