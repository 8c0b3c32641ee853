//go:build integration

package dra_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

	d := s.NewAgentDRA(t, nodeName, taDriver)
	ctd := containerd.Start(t, containerd.Options{CDISpecDirs: []string{d.CDIDir}})
	t.Setenv("NODE_NAME", nodeName)
	a := agent.Start(t, agent.Options{Binary: bin, NRISocket: ctd.NRISocket,
		Config: "policy:\n  name: topology-aware\n  config:\n    dra: {enabled: true}\n" + d.Config()})
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	plugin, err := kubelettest.Register(rctx, d.RegistrarDir)
	if err != nil {
		t.Fatalf("registering the agent's plugin: %v\n%s", err, a.Log())
	}
	defer plugin.Close()
	testkit.Eventually(t, "the agent's slices", func() bool {
		sl := slicesOf(t, s.Client(), taDriver, nodeName)
		return len(sl) == 1 && len(sl[0].Spec.Devices) > 0
	})

	class := s.CreateDeviceClass(t, "cpu", taDriver)
	ns := s.Namespace(t)
	claim, err := s.Client().ResourceV1().ResourceClaims(ns).Create(ctx, kubeapi.CPUClaim(ns, "one-cpu", class), metav1.CreateOptions{})
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
		claimed = kubeapi.ClaimCPUSet(c)
		return err == nil && claimed != ""
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
	if entries, _ := os.ReadDir(d.CDIDir); len(entries) != 0 {
		t.Errorf("CDI specs left after Unprepare: %v", entries)
	}
	testkit.Eventually(t, "the claim's status cleared", func() bool {
		c, err := s.Client().ResourceV1().ResourceClaims(ns).Get(ctx, claim.Name, metav1.GetOptions{})
		return err == nil && len(c.Status.Devices) == 0
	})
}
