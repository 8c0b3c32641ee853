//go:build integration

package dra_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/dra/kubelettest"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/integration/kubeapi"
	"github.com/nriwasm/nriwasm/policies/builtin"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

const taDriver = "topology-aware.nri.io"

// policyManager runs the built-in topology-aware module (Wasm) with DRA on, on
// a 2-socket, 4-NUMA-node fixture, synchronized with an empty runtime.
func policyManager(t testing.TB, nodeName string) *resmgr.Manager {
	t.Helper()
	sysfs := t.TempDir()
	if err := topologytest.Server2Socket4NodesInterleaved().Write(sysfs); err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Discover(sysfs)
	if err != nil {
		t.Fatal(err)
	}
	module, _ := builtin.Module("topology-aware")
	cfg := config.Default()
	cfg.Policy.Name = "topology-aware"
	cfg.Policy.Data = []byte("dra:\n  enabled: true\n")
	cfg.StateDir = t.TempDir()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policy.CacheDir = filepath.Join(cache, "nriwasm", "integration-compile")
	m, err := resmgr.New(context.Background(), cfg, topo, resmgr.WasmLoader("topology-aware", module, &cfg.Policy, testLogger(t)), resmgr.WithNodeName(nodeName), resmgr.WithDriverName(taDriver))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	if _, err := m.Synchronize(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAClaimAllocatedFromOurSlicesPrepares: the real policy's devices are
// published by the driver's service account; the scheduler's allocator picks
// one through a DeviceClass with a CEL selector; kubelet's Prepare runs the
// policy's Allocate, writes the CDI spec and the status lands on the claim;
// Unprepare removes both.
func TestAClaimAllocatedFromOurSlicesPrepares(t *testing.T) {
	s := kubeapi.Shared(t)
	ctx := context.Background()
	nodeName := s.UniqueName("node")
	m := policyManager(t, nodeName)
	n := startDriverOn(t, s, nodeName, taDriver, m)
	testkit.Eventually(t, "the policy's 4 devices published", func() bool {
		sl := slicesOf(t, s.Client(), taDriver, nodeName)
		return len(sl) == 1 && len(sl[0].Spec.Devices) == 4
	})

	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: s.UniqueName("cpus")}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.driver == "` + taDriver + `" && device.attributes["resource.kubernetes.io"].numaNode == 2`}}},
	}}
	if _, err := s.Client().ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := s.Namespace(t)
	claim, err := s.Client().ResourceV1().ResourceClaims(ns).Create(ctx, &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "cpus", Namespace: ns},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "cpus", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class.Name,
				Capacity: &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"dra.cpu/cpu": resource.MustParse("4")}}},
		}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim = s.Allocate(t, claim, nodeName)
	if r := claim.Status.Allocation.Devices.Results; len(r) != 1 || r[0].Device != "cpudevnuma002" || r[0].Pool != nodeName {
		t.Fatalf("allocated %+v, want cpudevnuma002 of pool %s", r, nodeName)
	}

	ref := kubelettest.Claim{Namespace: ns, Name: claim.Name, UID: string(claim.UID)}
	prepStart := time.Now()
	resp, err := n.plugin.Prepare(ctx, ref)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	t.Logf("FIGURE prepare through the Wasm policy with the CDI write: %v", time.Since(prepStart))
	want := abi.CDIDeviceName(taDriver, string(claim.UID), 0)
	if devs := resp[string(claim.UID)].Devices; len(devs) != 1 || devs[0].CdiDeviceIds[0] != want {
		t.Fatalf("prepared %v, want CDI device %s", devs, want)
	}
	spec, err := os.ReadFile(n.cdi.Path(string(claim.UID)))
	if err != nil || !strings.Contains(string(spec), "DRA_CPUSET_") {
		t.Fatalf("CDI spec %s: %v", spec, err)
	}

	var cpus string
	testkit.Eventually(t, "the device status on the claim", func() bool {
		c, err := s.Client().ResourceV1().ResourceClaims(ns).Get(ctx, claim.Name, metav1.GetOptions{})
		if err != nil || len(c.Status.Devices) != 1 {
			return false
		}
		d := c.Status.Devices[0]
		var data struct {
			CPUSet string `json:"cpuset"`
		}
		if d.Data != nil {
			_ = json.Unmarshal(d.Data.Raw, &data)
		}
		cpus = data.CPUSet
		return d.Driver == taDriver && d.Device == "cpudevnuma002" && len(d.Conditions) == 1 && d.Conditions[0].Type == "Ready" && cpus != ""
	})
	t.Logf("claim %s got CPUs %s of NUMA node 2", claim.Name, cpus)

	if err := n.plugin.Unprepare(ctx, ref); err != nil {
		t.Fatalf("Unprepare: %v", err)
	}
	if _, err := os.Stat(n.cdi.Path(string(claim.UID))); !os.IsNotExist(err) {
		t.Errorf("CDI spec still there: %v", err)
	}
	testkit.Eventually(t, "our status entries removed", func() bool {
		c, err := s.Client().ResourceV1().ResourceClaims(ns).Get(ctx, claim.Name, metav1.GetOptions{})
		return err == nil && len(c.Status.Devices) == 0
	})
	if len(m.PreparedClaims()) != 0 {
		t.Errorf("journal still holds %q", m.PreparedClaims())
	}
}
