//go:build integration

package kubeapi

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// AgentDRA is what an agent (`nriwasm run`) needs to be the DRA driver of a
// node on the server: its kubeconfig, as the driver's service account, and
// the directories of its DRA configuration, under a directory short enough
// for unix socket paths.
type AgentDRA struct {
	Kubeconfig, RegistrarDir, PluginDataDir, CDIDir string
}

// NewAgentDRA creates the node's directories (removed by cleanup) and writes
// the kubeconfig of driver's service account on node (InstallDriver first).
func (s *Server) NewAgentDRA(t testing.TB, node, driver string) AgentDRA {
	t.Helper()
	base, err := os.MkdirTemp("", "nrw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	d := AgentDRA{Kubeconfig: filepath.Join(base, "kubeconfig"), RegistrarDir: filepath.Join(base, "reg"),
		PluginDataDir: filepath.Join(base, "data"), CDIDir: filepath.Join(base, "cdi")}
	for _, dir := range []string{d.RegistrarDir, d.PluginDataDir, d.CDIDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rc := s.DriverConfig(t, node, driver)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthority: rc.CAFile, CertificateAuthorityData: rc.CAData}
	kc.AuthInfos["driver"] = &clientcmdapi.AuthInfo{Token: rc.BearerToken, TokenFile: rc.BearerTokenFile,
		ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "driver"}
	kc.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*kc, d.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	return d
}

// Config is the `dra:` section of the agent's configuration file.
func (d AgentDRA) Config() string {
	return "dra:\n  kubeconfig: " + d.Kubeconfig + "\n  registrarDir: " + d.RegistrarDir +
		"\n  pluginDataDir: " + d.PluginDataDir + "\n  cdiDir: " + d.CDIDir + "\n"
}

// CreateDeviceClass creates a DeviceClass, named after prefix, of every
// device of driver, and returns its name.
func (s *Server) CreateDeviceClass(t testing.TB, prefix, driver string) string {
	t.Helper()
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: s.UniqueName(prefix)}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "` + driver + `"`}}},
	}}
	if _, err := s.Client().ResourceV1().DeviceClasses().Create(context.Background(), class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return class.Name
}

// CPUClaim is a claim for one CPU (the "dra.cpu/cpu" capacity the
// topology-aware policy's devices have) of a device of class.
func CPUClaim(namespace, name, class string) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "cpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class,
				Capacity: &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"dra.cpu/cpu": resource.MustParse("1")}}},
		}}}},
	}
}

// ClaimCPUSet returns the CPUs the claim's status says its one device holds
// (the driver's device data, {"cpuset": …}), "" until the driver wrote it.
func ClaimCPUSet(c *resourcev1.ResourceClaim) string {
	if len(c.Status.Devices) != 1 || c.Status.Devices[0].Data == nil {
		return ""
	}
	var data struct {
		CPUSet string `json:"cpuset"`
	}
	if err := json.Unmarshal(c.Status.Devices[0].Data.Raw, &data); err != nil {
		return ""
	}
	return data.CPUSet
}
