package chart_test

import (
	"strings"
	"testing"
)

// TestSchemaRejects: bad values are refused before anything renders, with a
// message naming the value and what it must be.
func TestSchemaRejects(t *testing.T) {
	for _, c := range []struct {
		name   string
		values map[string]any
		want   []string
	}{
		{"index over 99", map[string]any{"nri": map[string]any{"pluginIndex": 100}}, []string{"/nri/pluginIndex", "maximum", "99"}},
		{"index negative", map[string]any{"nri": map[string]any{"pluginIndex": -1}}, []string{"/nri/pluginIndex", "minimum"}},
		{"index a string", map[string]any{"nri": map[string]any{"pluginIndex": "90"}}, []string{"/nri/pluginIndex", "want integer"}},
		{"failure policy", map[string]any{"nri": map[string]any{"onPolicyFailure": "fail-sometimes"}}, []string{"/nri/onPolicyFailure", "fail-open", "fail-closed"}},
		{"dra.enabled a string", map[string]any{"dra": map[string]any{"enabled": "yes"}}, []string{"/dra/enabled", "want null or boolean"}},
		{"policy by tag", map[string]any{"policy": map[string]any{"name": "oci://registry.example.com/p:1.0"}}, []string{"/policy/name", "does not match pattern"}},
		{"policy not a name", map[string]any{"policy": map[string]any{"name": "Topology_Aware"}}, []string{"/policy/name"}},
		{"unknown value", map[string]any{"nri": map[string]any{"pluginIdx": 5}}, []string{"/nri", "pluginIdx", "additional properties"}},
		{"metrics port", map[string]any{"metrics": map[string]any{"port": 70000}}, []string{"/metrics/port", "maximum"}},
		{"relative state dir", map[string]any{"stateDir": "var/lib/nriwasm"}, []string{"/stateDir", "does not match pattern"}},
		{"memory limit", map[string]any{"policy": map[string]any{"memoryLimit": "lots"}}, []string{"/policy/memoryLimit"}},
		{"tolerations not a list", map[string]any{"tolerations": map[string]any{"operator": "Exists"}}, []string{"/tolerations", "want array"}},
		{"verification without keys", map[string]any{"registry": map[string]any{"verification": "enforce"}}, []string{"/registry", "publicKeys"}},
		{"verification mode", map[string]any{"registry": map[string]any{"verification": "strict"}}, []string{"/registry/verification"}},
		{"image digest", map[string]any{"image": map[string]any{"digest": "sha256:abc"}}, []string{"/image/digest"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(t, c.values)
			if err == nil {
				t.Fatalf("values %v accepted", c.values)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestTemplateRejects: rules the schema cannot express fail the render with
// a message naming the value.
func TestTemplateRejects(t *testing.T) {
	for _, c := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"OCI policy without its name", map[string]any{"policy": map[string]any{"name": ociRef}}, "policy.metadataName: an OCI policy with DRA not off needs"},
		{"driver name too long", map[string]any{"dra": map[string]any{"domain": strings.Repeat("d", 40) + ".example.com"}}, `dra.domain: the driver name "topology-aware.ddd`},
		{"no service account", map[string]any{"serviceAccount": map[string]any{"create": false}}, "serviceAccount.name: name an existing ServiceAccount"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(t, c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want one containing %q", err, c.want)
			}
		})
	}
	// Without DRA an OCI policy needs no name: nothing is named after it.
	if _, err := render(t, map[string]any{"policy": map[string]any{"name": ociRef}, "dra": map[string]any{"enabled": false}}); err != nil {
		t.Errorf("OCI policy with DRA off: %v", err)
	}
}

// TestKubeVersion: the chart refuses clusters without resource.k8s.io/v1
// and installs on those with it.
func TestKubeVersion(t *testing.T) {
	for version, ok := range map[string]bool{"v1.33.5": false, "v1.34.0": true, "v1.37.2": true, "v1.38.0-alpha.1": true} {
		_, err := renderAt(t, nil, version)
		if (err == nil) != ok {
			t.Errorf("Kubernetes %s: error %v, want accepted = %v", version, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "chart requires kubeVersion: >=1.34.0-0") {
			t.Errorf("Kubernetes %s: error %v does not say which version the chart needs", version, err)
		}
	}
}
