//go:build integration

package helm_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/nriwasm/nriwasm/integration/kubeapi"
)

// helmCLI runs the helm binary .ci/helm-deps builds against one API server,
// with its own kubeconfig and Helm state directories (nothing of the
// user's is read or written).
type helmCLI struct {
	bin, kubeconfig, home string
	chart                 string
}

func newHelm(t *testing.T, s *kubeapi.Server) *helmCLI {
	t.Helper()
	dir := os.Getenv(kubeapi.BinEnv)
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(home, ".cache", "nriwasm-integration", "bin")
	}
	h := &helmCLI{bin: filepath.Join(dir, "helm"), home: t.TempDir()}
	if _, err := os.Stat(h.bin); err != nil {
		t.Fatalf("helm CLI missing (run .ci/helm-deps): %v", err)
	}
	chart, err := filepath.Abs(filepath.Join("..", "..", "charts", "nriwasm"))
	if err != nil {
		t.Fatal(err)
	}
	h.chart = chart
	cfg := s.Config()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubeapi"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["kubeapi"] = &clientcmdapi.Context{Cluster: "kubeapi", AuthInfo: "admin"}
	kc.CurrentContext = "kubeapi"
	h.kubeconfig = filepath.Join(h.home, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, h.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return h
}

// run runs helm with args and returns its output; a failure fails the test.
func (h *helmCLI) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := h.try(args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (h *helmCLI) try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, append(args, "--kubeconfig", h.kubeconfig)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+h.home+"/cache", "HELM_CONFIG_HOME="+h.home+"/config", "HELM_DATA_HOME="+h.home+"/data")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// valuesFile writes values to a file for helm's --values.
func valuesFile(t *testing.T, values map[string]any) string {
	t.Helper()
	data, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// agentConfig returns a configuration authenticated as namespace/sa
// running in a pod on node, as the chart's agent pod is: a pod bound to the
// node (never started: there is no kubelet) and a token bound to it, so the
// API server puts the node's name into the user info. The pod is deleted
// when the test ends.
func agentConfig(t *testing.T, s *kubeapi.Server, namespace, sa, node string) *rest.Config {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := s.Client()
	pod, err := c.CoreV1().Pods(namespace).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "agent-", Namespace: namespace},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			ServiceAccountName:           sa,
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "agent", Image: "nriwasm.invalid/agent:test"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating an agent pod on %s: %v", node, err)
	}
	t.Cleanup(func() {
		err := c.CoreV1().Pods(namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting pod %s: %v", pod.Name, err)
		}
	})
	tr, err := c.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To[int64](3600),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for %s/%s bound to pod %s: %v", namespace, sa, pod.Name, err)
	}
	admin := s.Config()
	cfg := &rest.Config{Host: admin.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}}
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview as the agent: %v", err)
	}
	if got := review.Status.UserInfo.Extra[kubeapi.NodeNameExtra]; len(got) != 1 || got[0] != node {
		t.Fatalf("the agent token's %s = %v, want [%s]", kubeapi.NodeNameExtra, got, node)
	}
	return cfg
}

// gone reports whether get answers NotFound; another error fails the test.
func gone(t *testing.T, what string, get func(context.Context) error) bool {
	t.Helper()
	err := get(context.Background())
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("get %s: %v", what, err)
	}
	return apierrors.IsNotFound(err)
}
