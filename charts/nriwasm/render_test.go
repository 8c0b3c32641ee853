package chart_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
)

const (
	releaseName = "nriwasm"
	namespace   = "nriwasm-system"
	// kubeVersion is the version the integration suite's API server reports.
	kubeVersion = "v1.37.2"
)

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// the chart writes: decoded strictly, a field the chart writes that is not
// here fails the test (the operator's module is not a dependency).
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// rendered is a release's objects, each decoded strictly into its type.
type rendered struct {
	notes          string
	daemonSet      *appsv1.DaemonSet
	configMap      *corev1.ConfigMap
	serviceAccount *corev1.ServiceAccount
	service        *corev1.Service
	clusterRole    *rbacv1.ClusterRole
	binding        *rbacv1.ClusterRoleBinding
	policy         *admissionv1.ValidatingAdmissionPolicy
	policyBinding  *admissionv1.ValidatingAdmissionPolicyBinding
	deviceClasses  []*resourcev1.DeviceClass
	serviceMonitor *serviceMonitor
	// fleet mode's objects (fleet.enabled)
	fleetRole          *rbacv1.ClusterRole
	fleetBinding       *rbacv1.ClusterRoleBinding
	fleetPolicy        *admissionv1.ValidatingAdmissionPolicy
	fleetPolicyBinding *admissionv1.ValidatingAdmissionPolicyBinding
	policyConfig       *v1alpha1.PolicyConfig
	config             *config.Config
	configYAML         string
}

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	c, err := loader.Load(".")
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	return c
}

// render installs the chart as helm install --dry-run does without a
// cluster (values are checked against values.schema.json, kubeVersion
// against kubeVersion), and returns the error or the objects.
func render(t testing.TB, values map[string]any) (*rendered, error) {
	t.Helper()
	return renderAt(t, values, kubeVersion)
}

// renderAt is render on a cluster of the given version.
func renderAt(t testing.TB, values map[string]any, version string) (*rendered, error) {
	t.Helper()
	v, err := semver.NewVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{Log: t.Logf})
	install.DryRun = true
	install.ClientOnly = true
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.KubeVersion = &chartutil.KubeVersion{Version: version, Major: fmt.Sprint(v.Major()), Minor: fmt.Sprint(v.Minor())}
	rel, err := install.Run(loadChart(t), values)
	if err != nil {
		return nil, err
	}
	r := &rendered{notes: rel.Info.Notes}
	for source, doc := range releaseutil.SplitManifests(rel.Manifest) {
		if err := r.add(doc); err != nil {
			t.Fatalf("%s: %v\n%s", source, err, doc)
		}
	}
	if r.daemonSet == nil || r.configMap == nil {
		t.Fatalf("no DaemonSet or ConfigMap rendered:\n%s", rel.Manifest)
	}
	r.configYAML = r.configMap.Data["config.yaml"]
	r.config = loadConfig(t, r.configMap)
	return r, nil
}

// add decodes one rendered document strictly into its API type.
func (r *rendered) add(doc string) error {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
		return err
	}
	var head struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		return err
	}
	fleet := strings.HasSuffix(head.Metadata.Name, "-fleet") || strings.HasSuffix(head.Metadata.Name, "-own-node-status")
	var obj any
	switch kind := meta.APIVersion + " " + meta.Kind; {
	case fleet && kind == "rbac.authorization.k8s.io/v1 ClusterRole":
		r.fleetRole = &rbacv1.ClusterRole{}
		obj = r.fleetRole
	case fleet && kind == "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
		r.fleetBinding = &rbacv1.ClusterRoleBinding{}
		obj = r.fleetBinding
	case fleet && kind == "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy":
		r.fleetPolicy = &admissionv1.ValidatingAdmissionPolicy{}
		obj = r.fleetPolicy
	case fleet && kind == "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding":
		r.fleetPolicyBinding = &admissionv1.ValidatingAdmissionPolicyBinding{}
		obj = r.fleetPolicyBinding
	case kind == "nriwasm.io/v1alpha1 PolicyConfig":
		r.policyConfig = &v1alpha1.PolicyConfig{}
		obj = r.policyConfig
	default:
		obj = r.addCore(meta)
	}
	if obj == nil {
		return fmt.Errorf("unexpected object %s %s", meta.APIVersion, meta.Kind)
	}
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		return fmt.Errorf("decoding %s strictly: %w", meta.Kind, err)
	}
	return nil
}

// addCore returns where a document of the chart's other kinds decodes to,
// nil for a kind the chart should not render.
func (r *rendered) addCore(meta metav1.TypeMeta) any {
	var obj any
	switch meta.APIVersion + " " + meta.Kind {
	case "apps/v1 DaemonSet":
		r.daemonSet = &appsv1.DaemonSet{}
		obj = r.daemonSet
	case "v1 ConfigMap":
		r.configMap = &corev1.ConfigMap{}
		obj = r.configMap
	case "v1 ServiceAccount":
		r.serviceAccount = &corev1.ServiceAccount{}
		obj = r.serviceAccount
	case "v1 Service":
		r.service = &corev1.Service{}
		obj = r.service
	case "rbac.authorization.k8s.io/v1 ClusterRole":
		r.clusterRole = &rbacv1.ClusterRole{}
		obj = r.clusterRole
	case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
		r.binding = &rbacv1.ClusterRoleBinding{}
		obj = r.binding
	case "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy":
		r.policy = &admissionv1.ValidatingAdmissionPolicy{}
		obj = r.policy
	case "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding":
		r.policyBinding = &admissionv1.ValidatingAdmissionPolicyBinding{}
		obj = r.policyBinding
	case "resource.k8s.io/v1 DeviceClass":
		dc := &resourcev1.DeviceClass{}
		r.deviceClasses = append(r.deviceClasses, dc)
		obj = dc
	case "monitoring.coreos.com/v1 ServiceMonitor":
		r.serviceMonitor = &serviceMonitor{}
		obj = r.serviceMonitor
	}
	return obj
}

// loadConfig writes the ConfigMap's files as the pod sees them and loads
// config.yaml with host/config, as the agent does.
func loadConfig(t testing.TB, cm *corev1.ConfigMap) *config.Config {
	t.Helper()
	dir := t.TempDir()
	for name, data := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatalf("the rendered configuration does not load: %v\n%s", err, cm.Data["config.yaml"])
	}
	return cfg
}

// mustRender renders values that must install.
func mustRender(t testing.TB, values map[string]any) *rendered {
	t.Helper()
	r, err := render(t, values)
	if err != nil {
		t.Fatalf("rendering: %v", err)
	}
	return r
}

// lint runs helm lint --strict with values and fails on any warning or
// error.
func lint(t *testing.T, values map[string]any) {
	t.Helper()
	l := action.NewLint()
	l.Strict = true
	l.Namespace = namespace
	l.KubeVersion = &chartutil.KubeVersion{Version: kubeVersion, Major: "1", Minor: "37"}
	res := l.Run([]string{"."}, values)
	for _, m := range res.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("lint: %s", m)
		}
	}
	for _, err := range res.Errors {
		t.Errorf("lint: %v", err)
	}
}

// container is the DaemonSet's agent container.
func (r *rendered) container(t testing.TB) corev1.Container {
	t.Helper()
	cs := r.daemonSet.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != "agent" {
		t.Fatalf("containers = %+v, want one named agent", cs)
	}
	return cs[0]
}

// mounts maps each mount path of the agent's container to its host path
// ("" for a volume that is not a hostPath) and read-only flag.
func (r *rendered) mounts(t testing.TB) map[string]string {
	t.Helper()
	vols := map[string]corev1.Volume{}
	for _, v := range r.daemonSet.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	out := map[string]string{}
	for _, m := range r.container(t).VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			t.Fatalf("mount %s: no volume %s", m.MountPath, m.Name)
		}
		host := ""
		if v.HostPath != nil {
			host = v.HostPath.Path
		}
		if m.ReadOnly {
			host += " (ro)"
		}
		out[m.MountPath] = host
	}
	return out
}

func (r *rendered) env(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range r.container(t).Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			out[e.Name] = "field:" + e.ValueFrom.FieldRef.FieldPath
		default:
			out[e.Name] = e.Value
		}
	}
	return out
}

func (r *rendered) deviceClassNames() []string {
	var names []string
	for _, dc := range r.deviceClasses {
		names = append(names, dc.Name)
	}
	slices.Sort(names)
	return names
}

// draObjects lists which DRA objects were rendered.
func (r *rendered) draObjects() []string {
	var got []string
	if r.clusterRole != nil {
		got = append(got, "ClusterRole")
	}
	if r.binding != nil {
		got = append(got, "ClusterRoleBinding")
	}
	if r.policy != nil {
		got = append(got, "ValidatingAdmissionPolicy")
	}
	if r.policyBinding != nil {
		got = append(got, "ValidatingAdmissionPolicyBinding")
	}
	if len(r.deviceClasses) > 0 {
		got = append(got, "DeviceClass")
	}
	return got
}

func join(s []string) string { return strings.Join(s, ",") }
