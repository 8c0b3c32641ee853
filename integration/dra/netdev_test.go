//go:build integration

package dra_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/dra/kubelettest"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/integration/kubeapi"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

const netdevDriver = "netdev.nri.io"

// TestNetdevNetworkDataLandsOnTheClaim: the Rust-built netdev policy's
// KEP-4817 network data (interface, canonical IPs, MAC) and Ready condition
// reach a real claim's status.devices through the claim-status writer,
// written as the driver's service account.
func TestNetdevNetworkDataLandsOnTheClaim(t *testing.T) {
	s := kubeapi.Shared(t)
	ctx := context.Background()
	nodeName := s.UniqueName("node")

	sysfs := t.TempDir()
	if err := topologytest.Server2Socket4NodesInterleaved().Write(sysfs); err != nil {
		t.Fatal(err)
	}
	addrs := map[string][]string{"ens1f0": {"10.0.0.5/24", "fd00::5/64"}}
	topo, err := topology.Discover(sysfs, topology.WithAddressLookup(func(name string) ([]string, error) { return addrs[name], nil }))
	if err != nil {
		t.Fatal(err)
	}
	module, err := os.ReadFile(filepath.Join("..", "..", "policies", "netdev", "netdev.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Policy.Name = "netdev"
	cfg.StateDir = t.TempDir()
	m, err := resmgr.New(ctx, cfg, topo, resmgr.WasmLoader("netdev", module, &cfg.Policy, testLogger(t)), resmgr.WithNodeName(nodeName), resmgr.WithDriverName(netdevDriver))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	if _, err := m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	n := startDriverOn(t, s, nodeName, netdevDriver, m)
	testkit.Eventually(t, "the interfaces published", func() bool {
		sl := slicesOf(t, s.Client(), netdevDriver, nodeName)
		return len(sl) == 1 && slices.ContainsFunc(sl[0].Spec.Devices, func(d resourcev1.Device) bool { return d.Name == "ens1f0" })
	})

	ns := s.Namespace(t)
	claim := s.CreateAllocatedClaim(t, ns, "nic", nodeName, kubeapi.Result("nic", netdevDriver, nodeName, "ens1f0"))
	if _, err := n.plugin.Prepare(ctx, kubelettest.Claim{Namespace: ns, Name: claim.Name, UID: string(claim.UID)}); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	var got resourcev1.AllocatedDeviceStatus
	testkit.Eventually(t, "the network data on the claim", func() bool {
		c, err := s.Client().ResourceV1().ResourceClaims(ns).Get(ctx, claim.Name, metav1.GetOptions{})
		if err != nil || len(c.Status.Devices) != 1 {
			return false
		}
		got = c.Status.Devices[0]
		return got.NetworkData != nil
	})
	nd := got.NetworkData
	if got.Driver != netdevDriver || got.Device != "ens1f0" || nd.InterfaceName != "ens1f0" ||
		nd.HardwareAddress != "b8:ce:f6:00:00:10" || !slices.Equal(nd.IPs, []string{"10.0.0.5/24", "fd00::5/64"}) {
		t.Errorf("status = %+v, network data %+v", got, nd)
	}
	if len(got.Conditions) != 1 || got.Conditions[0].Type != "Ready" || got.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("conditions = %+v, want Ready=True", got.Conditions)
	}
}
