//go:build integration

package dra_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nriwasm/nriwasm/host/dra/kubelettest"
	"github.com/nriwasm/nriwasm/integration/agent"
	"github.com/nriwasm/nriwasm/integration/containerd"
	"github.com/nriwasm/nriwasm/integration/kubeapi"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

var nriwasm struct {
	once sync.Once
	bin  string
	err  error
}

// binary builds nriwasm once per test binary.
func binary(t *testing.T) string {
	t.Helper()
	nriwasm.once.Do(func() {
		dir, err := os.MkdirTemp("", "nriwasm-dra-")
		if err != nil {
			nriwasm.err = err
			return
		}
		nriwasm.bin, nriwasm.err = agent.Build(dir)
	})
	if nriwasm.err != nil {
		t.Fatal(nriwasm.err)
	}
	return nriwasm.bin
}

// writeKubeconfig writes rc as a kubeconfig file.
func writeKubeconfig(t *testing.T, rc *rest.Config, path string) {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthority: rc.CAFile, CertificateAuthorityData: rc.CAData}
	kc.AuthInfos["driver"] = &clientcmdapi.AuthInfo{Token: rc.BearerToken, TokenFile: rc.BearerTokenFile,
		ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "driver"}
	kc.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
}

// TestTheWholePath: `nriwasm run` with DRA on, as the driver's service
// account against the real API server and as the NRI plugin of a real
// containerd. Its slices are published; the scheduler's allocator allocates
// a claim for one CPU; the kubelet stand-in prepares it; a container created
// with the claim's CDI device is pinned by NRI to exactly the claimed CPUs
// (read back from its cgroup); the status is on the claim; unprepare cleans
// up.
func TestTheWholePath(t *testing.T) {
	s := kubeapi.Shared(t)
	ctx := context.Background()
	bin := binary(t)
	nodeName := s.UniqueName("node")
	s.CreateNode(t, nodeName)
	s.InstallDriver(t, taDriver)

	base := shortDir(t)
	cdiDir, regDir, dataDir := filepath.Join(base, "cdi"), filepath.Join(base, "reg"), filepath.Join(base, "data")
	for _, d := range []string{cdiDir, regDir, dataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(base, "kubeconfig")
	writeKubeconfig(t, s.DriverConfig(t, nodeName, taDriver), kubeconfig)

	ctd := containerd.Start(t, containerd.Options{CDISpecDirs: []string{cdiDir}})
	t.Setenv("NODE_NAME", nodeName)
	a := agent.Start(t, agent.Options{Binary: bin, NRISocket: ctd.NRISocket, Config: `policy:
  name: topology-aware
  config:
    dra: {enabled: true}
dra:
  kubeconfig: ` + kubeconfig + `
  registrarDir: ` + regDir + `
  pluginDataDir: ` + dataDir + `
  cdiDir: ` + cdiDir + `
`})
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	plugin, err := kubelettest.Register(rctx, regDir)
	if err != nil {
		t.Fatalf("registering the agent's plugin: %v\n%s", err, a.Log())
	}
	defer plugin.Close()
	testkit.Eventually(t, "the agent's slices", func() bool {
		sl := slicesOf(t, s.Client(), taDriver, nodeName)
		return len(sl) == 1 && len(sl[0].Spec.Devices) > 0
	})

	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: s.UniqueName("cpu")}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "` + taDriver + `"`}}},
	}}
	if _, err := s.Client().ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := s.Namespace(t)
	claim, err := s.Client().ResourceV1().ResourceClaims(ns).Create(ctx, &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "one-cpu", Namespace: ns},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "cpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class.Name,
				Capacity: &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"dra.cpu/cpu": resource.MustParse("1")}}},
		}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim = s.Allocate(t, claim, nodeName)
	ref := kubelettest.Claim{Namespace: ns, Name: claim.Name, UID: string(claim.UID)}
	resp, err := plugin.Prepare(ctx, ref)
	if err != nil {
		t.Fatalf("Prepare: %v\n%s", err, a.Log())
	}
	ids := resp[string(claim.UID)].Devices[0].CdiDeviceIds

	var claimed string
	testkit.Eventually(t, "the claim's status", func() bool {
		c, err := s.Client().ResourceV1().ResourceClaims(ns).Get(ctx, claim.Name, metav1.GetOptions{})
		if err != nil || len(c.Status.Devices) != 1 || c.Status.Devices[0].Data == nil {
			return false
		}
		var data struct {
			CPUSet string `json:"cpuset"`
		}
		_ = json.Unmarshal(c.Status.Devices[0].Data.Raw, &data)
		claimed = data.CPUSet
		return claimed != ""
	})

	pod, err := ctd.RunPodSandbox(ctx, containerd.PodOptions{Name: "dra-pod", Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	id, err := ctd.RunContainer(ctx, pod, containerd.ContainerOptions{Name: "worker", CDIDevices: ids})
	if err != nil {
		t.Fatalf("creating a container with CDI devices %q: %v", ids, err)
	}
	var got string
	testkit.Eventually(t, "the container pinned to the claimed CPUs", func() bool {
		got, err = ctd.CPUSet(ctx, id)
		return err == nil && got == claimed
	})
	t.Logf("container %s runs on CPUs %s, the claim's", id, got)

	if err := ctd.StopContainer(ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	if err := ctd.RemoveContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := plugin.Unprepare(ctx, ref); err != nil {
		t.Fatalf("Unprepare: %v", err)
	}
	if entries, _ := os.ReadDir(cdiDir); len(entries) != 0 {
		t.Errorf("CDI specs left after Unprepare: %v", entries)
	}
	testkit.Eventually(t, "the claim's status cleared", func() bool {
		c, err := s.Client().ResourceV1().ResourceClaims(ns).Get(ctx, claim.Name, metav1.GetOptions{})
		return err == nil && len(c.Status.Devices) == 0
	})
}
