package chart_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nriwasm/nriwasm/host/config"
)

const (
	digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	ociRef = "oci://registry.example.com/policies/my-policy@" + digest
	pemKey = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n"
)

// cases are the meaningful combinations of values.
var cases = []struct {
	name   string
	values map[string]any
	// driver is the DRA driver's name; "" when DRA is off.
	driver string
	// draEnabled is the configuration's dra.enabled.
	draEnabled *bool
}{
	{name: "defaults", values: nil, driver: "topology-aware.nri.io"},
	{name: "dra-off", values: map[string]any{"dra": map[string]any{"enabled": false}}, draEnabled: ptr(false)},
	{name: "dra-on", values: map[string]any{"dra": map[string]any{"enabled": true, "domain": "example.com"},
		"policy": map[string]any{"name": "balloons", "config": map[string]any{"balloonTypes": []any{map[string]any{"name": "db"}}}}},
		driver: "balloons.example.com", draEnabled: ptr(true)},
	{name: "oci-policy", values: map[string]any{
		"policy":   map[string]any{"name": ociRef, "metadataName": "my-policy"},
		"registry": map[string]any{"verification": "enforce", "publicKeys": []any{pemKey}, "credentialsSecret": "regcred", "timeout": "30s"}},
		driver: "my-policy.nri.io"},
	{name: "service-monitor", values: map[string]any{"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}}},
		driver: "topology-aware.nri.io"},
	{name: "index-fail-closed", values: map[string]any{"nri": map[string]any{"pluginIndex": 7, "onPolicyFailure": "fail-closed"},
		"dra": map[string]any{"enabled": false}}, draEnabled: ptr(false)},
}

func ptr[T any](v T) *T { return &v }

// TestCombinations renders and lints every combination, decodes every
// object strictly (render does) and loads the configuration with
// host/config; DRA's objects, mounts and env appear exactly when DRA is
// not off.
func TestCombinations(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lint(t, c.values)
			r := mustRender(t, c.values)
			dra := c.driver != ""
			want := ""
			if dra {
				want = "ClusterRole,ClusterRoleBinding,ValidatingAdmissionPolicy,ValidatingAdmissionPolicyBinding,DeviceClass"
			}
			if got := join(r.draObjects()); got != want {
				t.Errorf("DRA objects = %q, want %q", got, want)
			}
			if got := r.config.DRA.Enabled; (got == nil) != (c.draEnabled == nil) || got != nil && *got != *c.draEnabled {
				t.Errorf("config dra.enabled = %v, want %v\n%s", deref(got), deref(c.draEnabled), r.configYAML)
			}
			mounts, env := r.mounts(t), r.env(t)
			for _, p := range []string{"/var/lib/kubelet/plugins", "/var/lib/kubelet/plugins_registry", "/var/run/cdi"} {
				if _, ok := mounts[p]; ok != dra {
					t.Errorf("mount %s present = %v, want %v", p, ok, dra)
				}
			}
			if _, ok := env["POD_UID"]; ok != dra {
				t.Errorf("POD_UID set = %v, want %v", ok, dra)
			}
			if got := *r.daemonSet.Spec.Template.Spec.AutomountServiceAccountToken; got != dra {
				t.Errorf("automountServiceAccountToken = %v, want %v (only DRA talks to the API server)", got, dra)
			}
			if !dra {
				if strings.Contains(r.notes, "ClusterRole") || !strings.Contains(r.notes, "DRA: off") {
					t.Errorf("NOTES for DRA off:\n%s", r.notes)
				}
				return
			}
			if got := r.config.DRA.DriverName(policyName(r.config)); got != c.driver {
				t.Errorf("the agent's driver name = %q, want %q", got, c.driver)
			}
			if got := r.clusterRole.Rules[2].ResourceNames; !slices.Equal(got, []string{c.driver}) {
				t.Errorf("resourceclaims/driver resourceNames = %v, want [%s]", got, c.driver)
			}
			if got := r.deviceClassNames(); !slices.Equal(got, []string{c.driver}) {
				t.Errorf("DeviceClasses = %v, want [%s]", got, c.driver)
			}
			sel := r.deviceClasses[0].Spec.Selectors
			if len(sel) != 1 || sel[0].CEL == nil || sel[0].CEL.Expression != `device.driver == "`+c.driver+`"` {
				t.Errorf("DeviceClass selectors = %+v, want device.driver == %q", sel, c.driver)
			}
			if got, want := r.config.DRA.DataDir(c.driver), "/var/lib/kubelet/plugins/"+c.driver; got != want {
				t.Errorf("dra.pluginDataDir = %q, want %q (under the mounted plugins directory)", got, want)
			}
			for _, s := range []string{c.driver, "own-node-slices", "kubectl get resourceslices"} {
				if !strings.Contains(r.notes, s) {
					t.Errorf("NOTES lack %q:\n%s", s, r.notes)
				}
			}
		})
	}
}

// policyName is the name the agent derives the driver's name from: the
// built-in name (an OCI policy's comes from its metadata, which the chart
// takes from policy.metadataName).
func policyName(cfg *config.Config) string {
	if cfg.Policy.IsOCI() {
		return "my-policy"
	}
	return cfg.Policy.Name
}

func deref(b *bool) string {
	if b == nil {
		return "unset"
	}
	if *b {
		return "true"
	}
	return "false"
}

// TestDaemonSet checks the pod the defaults give: the host mounts at the
// host's own paths (kubelet finds the sockets where the agent made them),
// the downward-API env, the probes on the metrics port, the surge update.
func TestDaemonSet(t *testing.T) {
	r := mustRender(t, nil)
	ds := r.daemonSet
	wantMounts := map[string]string{
		"/etc/nriwasm":                      " (ro)",
		"/var/run/nri":                      "/var/run/nri",
		"/sys":                              "/sys (ro)",
		"/var/lib/nriwasm":                  "/var/lib/nriwasm",
		"/tmp":                              "",
		"/var/lib/kubelet/plugins":          "/var/lib/kubelet/plugins",
		"/var/lib/kubelet/plugins_registry": "/var/lib/kubelet/plugins_registry",
		"/var/run/cdi":                      "/var/run/cdi",
	}
	if got := r.mounts(t); !maps.Equal(got, wantMounts) {
		t.Errorf("mounts = %v\nwant %v", got, wantMounts)
	}
	wantEnv := map[string]string{"NODE_NAME": "field:spec.nodeName", "POD_UID": "field:metadata.uid"}
	if got := r.env(t); !maps.Equal(got, wantEnv) {
		t.Errorf("env = %v, want %v", got, wantEnv)
	}
	c := r.container(t)
	if want := []string{"run", "--config", "/etc/nriwasm/config.yaml"}; !slices.Equal(c.Args, want) {
		t.Errorf("args = %v, want %v", c.Args, want)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 9090 {
		t.Errorf("ports = %+v, want metrics 9090", c.Ports)
	}
	if r.config.Metrics.Address != ":9090" {
		t.Errorf("metrics.address = %q, want :9090", r.config.Metrics.Address)
	}
	for name, p := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe, "/healthz ": c.StartupProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != strings.TrimSpace(name) || p.HTTPGet.Port != intstr.FromString("metrics") {
			t.Errorf("probe %s = %+v, want GET %s on port metrics", name, p, name)
		}
	}
	s := ds.Spec.UpdateStrategy
	if s.Type != appsv1.RollingUpdateDaemonSetStrategyType || s.RollingUpdate == nil ||
		*s.RollingUpdate.MaxSurge != intstr.FromInt32(1) || *s.RollingUpdate.MaxUnavailable != intstr.FromInt32(0) {
		t.Errorf("updateStrategy = %+v, want RollingUpdate maxSurge 1 maxUnavailable 0", s)
	}
	spec := ds.Spec.Template.Spec
	if spec.PriorityClassName != "system-node-critical" || len(spec.Tolerations) != 1 || spec.Tolerations[0].Operator != corev1.TolerationOpExists {
		t.Errorf("priority %q, tolerations %+v: want system-node-critical, tolerating every taint", spec.PriorityClassName, spec.Tolerations)
	}
	if spec.ServiceAccountName != r.serviceAccount.Name {
		t.Errorf("serviceAccountName = %q, ServiceAccount %q", spec.ServiceAccountName, r.serviceAccount.Name)
	}
	sc := c.SecurityContext
	if sc == nil || sc.Privileged != nil || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("securityContext = %+v, want unprivileged, read-only root, every capability dropped", sc)
	}
	if got, want := c.Image, "ghcr.io/nriwasm/nriwasm:0.1.0"; got != want {
		t.Errorf("image = %q, want %q (the chart's appVersion)", got, want)
	}
	if !maps.Equal(ds.Spec.Selector.MatchLabels, map[string]string{"app.kubernetes.io/name": "nriwasm", "app.kubernetes.io/instance": releaseName}) {
		t.Errorf("selector = %v", ds.Spec.Selector.MatchLabels)
	}
}

// TestValuesReachThePod: each value lands where it should.
func TestValuesReachThePod(t *testing.T) {
	r := mustRender(t, map[string]any{
		"image":             map[string]any{"digest": digest},
		"nodeSelector":      map[string]any{"node-role.example.com/worker": "true"},
		"tolerations":       []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}},
		"priorityClassName": "high",
		"resources":         map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}},
		"nri":               map[string]any{"socketPath": "/run/containerd/nri/nri.sock"},
		"dra":               map[string]any{"kubeletDir": "/data/kubelet", "cdiDir": "/etc/cdi", "extraDeviceClasses": []any{map[string]any{"name": "numa0", "selectors": []any{`device.attributes["resource.kubernetes.io"].numaNode == 0`}}}},
		"stateDir":          "/data/nriwasm",
		"metrics":           map[string]any{"port": 9100},
		"log":               map[string]any{"verbosity": 2},
		"policy":            map[string]any{"memoryLimit": "512Mi", "callTimeout": "500ms"},
		"hostNetwork":       true,
		"extraEnv":          []any{map[string]any{"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"}},
	})
	c, spec := r.container(t), r.daemonSet.Spec.Template.Spec
	if got, want := c.Image, "ghcr.io/nriwasm/nriwasm@"+digest; got != want {
		t.Errorf("image = %q, want %q", got, want)
	}
	if spec.NodeSelector["node-role.example.com/worker"] != "true" || spec.PriorityClassName != "high" || len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "dedicated" {
		t.Errorf("nodeSelector %v, priorityClassName %q, tolerations %+v", spec.NodeSelector, spec.PriorityClassName, spec.Tolerations)
	}
	// Helm merges maps: the default requests stay.
	if c.Resources.Limits.Memory().String() != "1Gi" || c.Resources.Limits.Cpu().String() != "1" || c.Resources.Requests.Cpu().String() != "50m" {
		t.Errorf("resources = %+v, want limits cpu 1 memory 1Gi, the default requests", c.Resources)
	}
	if !spec.HostNetwork || spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Errorf("hostNetwork %v, dnsPolicy %q: want the node's network", spec.HostNetwork, spec.DNSPolicy)
	}
	if env := r.env(t); env["KUBERNETES_SERVICE_HOST"] != "127.0.0.1" || env["NODE_NAME"] != "field:spec.nodeName" {
		t.Errorf("env = %v, want extraEnv's KUBERNETES_SERVICE_HOST beside the chart's own", env)
	}
	m := r.mounts(t)
	for path, host := range map[string]string{"/run/containerd/nri": "/run/containerd/nri", "/data/kubelet/plugins": "/data/kubelet/plugins",
		"/data/kubelet/plugins_registry": "/data/kubelet/plugins_registry", "/etc/cdi": "/etc/cdi", "/data/nriwasm": "/data/nriwasm"} {
		if m[path] != host {
			t.Errorf("mount %s = %q, want host path %q", path, m[path], host)
		}
	}
	cfg := r.config
	if cfg.NRI.SocketPath != "/run/containerd/nri/nri.sock" || cfg.DRA.RegistrarDir != "/data/kubelet/plugins_registry" ||
		cfg.DRA.DataDir("topology-aware.nri.io") != "/data/kubelet/plugins/topology-aware.nri.io" || cfg.DRA.CDIDir != "/etc/cdi" ||
		cfg.StateDir != "/data/nriwasm" || cfg.Metrics.Address != ":9100" || cfg.Log.Verbosity != 2 ||
		cfg.Policy.MemoryLimit != 512<<20 || cfg.Policy.CallTimeout.String() != "500ms" {
		t.Errorf("configuration does not follow the values:\n%s", r.configYAML)
	}
	if c.Ports[0].ContainerPort != 9100 {
		t.Errorf("metrics port = %d, want 9100", c.Ports[0].ContainerPort)
	}
	if got := r.deviceClassNames(); !slices.Equal(got, []string{"numa0", "topology-aware.nri.io"}) {
		t.Fatalf("DeviceClasses = %v", got)
	}
	for _, dc := range r.deviceClasses {
		if dc.Name == "numa0" && (len(dc.Spec.Selectors) != 2 || dc.Spec.Selectors[0].CEL.Expression != `device.driver == "topology-aware.nri.io"`) {
			t.Errorf("numa0 selectors = %+v, want the driver's devices and the extra selector", dc.Spec.Selectors)
		}
	}
}

// TestConfigFile: the configuration the agent loads says what the values
// say, the policy's configuration with its own field names.
func TestConfigFile(t *testing.T) {
	r := mustRender(t, map[string]any{
		"nri":    map[string]any{"pluginIndex": 7, "onPolicyFailure": "fail-closed"},
		"policy": map[string]any{"config": map[string]any{"reservedCPUs": "0-1", "dra": map[string]any{"enabled": true}}},
	})
	cfg := r.config
	if cfg.NRI.PluginIndex != "07" || cfg.NRI.OnPolicyFailure != config.FailClosed {
		t.Errorf("nri = %+v, want index 07, fail-closed", cfg.NRI)
	}
	if got, want := string(cfg.Policy.Data), `{"dra":{"enabled":true},"reservedCPUs":"0-1"}`; got != want {
		t.Errorf("policy configuration = %s, want %s", got, want)
	}
	if cfg.DRA.Enabled != nil {
		t.Errorf("dra.enabled = %v, want unset (the policy decides)", *cfg.DRA.Enabled)
	}
	d := mustRender(t, nil).config
	if d.Policy.Name != "topology-aware" || d.Policy.Data != nil || d.NRI.PluginIndex != config.DefaultPluginIndex {
		t.Errorf("defaults: policy %q data %q index %q", d.Policy.Name, d.Policy.Data, d.NRI.PluginIndex)
	}
}

// TestOCIPolicy: an OCI policy brings its registry settings, keys and
// credentials into the pod.
func TestOCIPolicy(t *testing.T) {
	r := mustRender(t, cases[3].values)
	cfg := r.config
	if cfg.Policy.Name != ociRef || cfg.Registry.Verification != "enforce" || !slices.Equal(cfg.Registry.PublicKeys, []string{"/etc/nriwasm/keys/key-0.pub"}) {
		t.Errorf("registry configuration:\n%s", r.configYAML)
	}
	if got := r.configMap.Data["key-0.pub"]; strings.TrimSpace(got) != strings.TrimSpace(pemKey) {
		t.Errorf("key-0.pub = %q, want %q", got, pemKey)
	}
	if got := r.env(t)["DOCKER_CONFIG"]; got != "/etc/nriwasm/docker" {
		t.Errorf("DOCKER_CONFIG = %q", got)
	}
	var secret *corev1.SecretVolumeSource
	for _, v := range r.daemonSet.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			secret = v.Secret
		}
	}
	if secret == nil || secret.SecretName != "regcred" || len(secret.Items) != 1 || secret.Items[0].Key != ".dockerconfigjson" || secret.Items[0].Path != "config.json" {
		t.Errorf("credentials volume = %+v", secret)
	}
}

// TestServiceMonitor: the ServiceMonitor scrapes the metrics port through a
// headless Service selecting the agent's pods.
func TestServiceMonitor(t *testing.T) {
	r := mustRender(t, cases[4].values)
	sm, svc := r.serviceMonitor, r.service
	if sm == nil || svc == nil {
		t.Fatal("no ServiceMonitor or Service")
	}
	if sm.Labels["release"] != "prom" || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor = %+v", sm)
	}
	if !maps.Equal(svc.Spec.Selector, r.daemonSet.Spec.Selector.MatchLabels) || svc.Spec.ClusterIP != "None" {
		t.Errorf("Service selector %v clusterIP %q, want the pods' %v, headless", svc.Spec.Selector, svc.Spec.ClusterIP, r.daemonSet.Spec.Selector.MatchLabels)
	}
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s, the Service has %q", k, v, svc.Labels[k])
		}
	}
	if d := mustRender(t, nil); d.serviceMonitor != nil || d.service != nil {
		t.Error("ServiceMonitor or Service rendered by default")
	}
}

// TestRestartChecksum: the pods roll when a field the agent cannot change
// live changes, not when only the policy's configuration does.
func TestRestartChecksum(t *testing.T) {
	sum := func(values map[string]any) string {
		return mustRender(t, values).daemonSet.Spec.Template.Annotations["nriwasm.io/restart-config"]
	}
	base := sum(nil)
	if base == "" {
		t.Fatal("no nriwasm.io/restart-config annotation")
	}
	if got := sum(map[string]any{"policy": map[string]any{"config": map[string]any{"reservedCPUs": "0"}}}); got != base {
		t.Error("a policy configuration change rolls the pods; the agent applies it live")
	}
	if got := sum(map[string]any{"nri": map[string]any{"pluginIndex": 50}}); got == base {
		t.Error("a plugin index change does not roll the pods; the agent needs a restart for it")
	}
}

// TestDRAUnsetIsNotFalse: dra.enabled set to null (as --set dra.enabled=null
// or a values file's "enabled: null" give it) stays unset — the policy
// decides, so DRA's objects are installed — and never reads as false.
func TestDRAUnsetIsNotFalse(t *testing.T) {
	r := mustRender(t, map[string]any{"dra": map[string]any{"enabled": nil}})
	if r.config.DRA.Enabled != nil {
		t.Errorf("dra.enabled = %v, want unset", *r.config.DRA.Enabled)
	}
	if strings.Contains(r.configYAML, "enabled") {
		t.Errorf("the configuration names dra.enabled:\n%s", r.configYAML)
	}
	if got := join(r.draObjects()); got == "" {
		t.Error("no DRA objects with dra.enabled unset: the policy could not turn DRA on")
	}
	if !strings.Contains(r.notes, "up to the policy") {
		t.Errorf("NOTES do not say the policy decides:\n%s", r.notes)
	}
}
