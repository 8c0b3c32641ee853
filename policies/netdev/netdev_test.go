//go:build !wasip1

package netdev_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/netdev"
)

// load starts the built module and initializes it with topo and restore.
func load(t *testing.T, topo *abi.Topology, restore *abi.RestoreState) *abi.Client {
	t.Helper()
	ctx := context.Background()
	p, err := wasm.Load(ctx, "netdev", netdev.Module, wasm.WithCacheDir(t.TempDir()))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	client := abi.NewClient(p)
	resp, err := client.Init(ctx, &abi.InitRequest{NodeName: "node-1", Topology: topo, Restore: restore, DriverName: "netdev.nri.io"})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if !resp.GetWantsDra() {
		t.Fatal("Init did not ask for DRA")
	}
	return client
}

// machineTopology discovers the topology of a synthetic machine's sysfs tree.
func machineTopology(t *testing.T, m topologytest.Machine, addrs topology.AddressLookup) *abi.Topology {
	t.Helper()
	dir := t.TempDir()
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	var opts []topology.Option
	if addrs != nil {
		opts = append(opts, topology.WithAddressLookup(addrs))
	}
	topo, err := topology.Discover(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func capturedVM(t *testing.T) *abi.Topology {
	t.Helper()
	dir := t.TempDir()
	if err := topologytest.Restore("../../host/topology/testdata/captured-vm", dir); err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func byName(devs []*abi.Device) map[string]*abi.Device {
	out := map[string]*abi.Device{}
	for _, d := range devs {
		out[d.GetName()] = d
	}
	return out
}

func str(d *abi.Device, name string) string { return d.GetAttributes()[name].GetStringValue() }

// TestDevicesOfferEveryBackedInterface: every interface with a backing device
// is offered, with its attributes from the topology, and the answer passes the
// host's ResourceSlice validation; bridges and loopback are not offered.
func TestDevicesOfferEveryBackedInterface(t *testing.T) {
	for _, tc := range []struct {
		name string
		topo func(*testing.T) *abi.Topology
	}{
		{"server", func(t *testing.T) *abi.Topology {
			return machineTopology(t, topologytest.Server2Socket4NodesInterleaved(), nil)
		}},
		{"desktop", func(t *testing.T) *abi.Topology { return machineTopology(t, topologytest.Desktop1Socket(), nil) }},
		{"laptop", func(t *testing.T) *abi.Topology { return machineTopology(t, topologytest.HybridLaptop(), nil) }},
		{"captured-vm", capturedVM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := tc.topo(t)
			client := load(t, topo, nil)
			resp, err := client.Devices(context.Background(), &abi.DevicesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if err := validate.Devices(resp); err != nil {
				t.Fatalf("Devices answer fails validation: %v", err)
			}
			devs := byName(resp.GetDevices())
			var want []string
			for _, ni := range topo.GetNetworkInterfaces() {
				if ni.GetVirtual() {
					if _, ok := devs[ni.GetName()]; ok {
						t.Errorf("virtual interface %s is offered", ni.GetName())
					}
					continue
				}
				want = append(want, ni.GetName())
				d, ok := devs[ni.GetName()]
				if !ok {
					t.Errorf("interface %s is not offered; devices %v", ni.GetName(), slices.Sorted(maps.Keys(devs)))
					continue
				}
				if got := str(d, "interfaceName"); got != ni.GetName() {
					t.Errorf("%s: interfaceName = %q", ni.GetName(), got)
				}
				if got := str(d, "macAddress"); got != ni.GetMac() {
					t.Errorf("%s: macAddress = %q, want %q", ni.GetName(), got, ni.GetMac())
				}
				if got := str(d, "pciAddress"); got != ni.GetPciAddress() {
					t.Errorf("%s: pciAddress = %q, want %q", ni.GetName(), got, ni.GetPciAddress())
				}
				if got := str(d, "resource.kubernetes.io/pcieRoot"); got != ni.GetPcieRoot() {
					t.Errorf("%s: pcieRoot = %q, want %q", ni.GetName(), got, ni.GetPcieRoot())
				}
				numa, has := d.GetAttributes()["numaNode"]
				if has != (ni.NumaNode != nil) || (has && numa.GetIntValue() != int64(ni.GetNumaNode())) {
					t.Errorf("%s: numaNode = %v, topology says %v", ni.GetName(), numa, ni.NumaNode)
				}
				if got := d.GetAttributes()["mtu"].GetIntValue(); got != int64(ni.GetMtu()) {
					t.Errorf("%s: mtu = %d, want %d", ni.GetName(), got, ni.GetMtu())
				}
			}
			if len(want) == 0 || len(devs) != len(want) {
				t.Fatalf("offered %v, want exactly %v", slices.Sorted(maps.Keys(devs)), want)
			}
		})
	}
}

// TestDeviceNamesAreDNSLabels: interface names that are not DNS labels are
// normalized, collisions get suffixes, and the attributes keep the real name.
func TestDeviceNamesAreDNSLabels(t *testing.T) {
	topo := &abi.Topology{NetworkInterfaces: []*abi.NetworkInterface{
		{Name: "eth0.100", PciAddress: "0000:17:00.0", Mac: "b8:ce:f6:00:00:10", Up: true},
		{Name: "Eth0_100", PciAddress: "0000:17:00.1", Mac: "b8:ce:f6:00:00:11", Up: true},
		{Name: "ens1f0", PciAddress: "0000:18:00.0", Mac: "b8:ce:f6:00:00:12", Up: true},
		{Name: "br0", Virtual: true, Up: true},
	}}
	client := load(t, topo, nil)
	resp, err := client.Devices(context.Background(), &abi.DevicesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Devices(resp); err != nil {
		t.Fatalf("Devices answer fails validation: %v", err)
	}
	got := map[string]string{}
	for _, d := range resp.GetDevices() {
		got[d.GetName()] = str(d, "interfaceName")
	}
	// Sorted by interface name: "Eth0_100" < "ens1f0" < "eth0.100".
	want := map[string]string{"eth0-100": "Eth0_100", "ens1f0": "ens1f0", "eth0-100-2": "eth0.100"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("device → interface = %v, want %v", got, want)
	}
}

func claim(uid string, results ...*abi.DeviceAllocation) *abi.Claim {
	return &abi.Claim{Uid: uid, Namespace: "default", Name: "claim-" + uid, Results: results}
}

func result(request, device string) *abi.DeviceAllocation {
	return &abi.DeviceAllocation{Request: request, Pool: "node-1", Device: device}
}

// TestAllocateReportsNetworkData: Allocate answers each result with the CDI env
// naming the interface and the KEP-4817 status (Ready, interface name, canonical
// IPs, MAC), which passes the host's claim validation.
func TestAllocateReportsNetworkData(t *testing.T) {
	addrs := map[string][]string{
		"ens1f0": {"10.0.0.5/24", "fd00::5/64"},
		"ens2f0": {"192.168.1.7/16"},
	}
	topo := machineTopology(t, topologytest.Server2Socket4NodesInterleaved(), func(name string) ([]string, error) {
		return addrs[name], nil
	})
	client := load(t, topo, nil)
	c := claim("uid-1", result("fast-nic", "ens1f0"), result("slow/nic", "ens1f1"))
	resp, err := client.Allocate(context.Background(), &abi.AllocateRequest{Claim: c})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Prepared(resp, c); err != nil {
		t.Fatalf("Allocate answer fails validation: %v", err)
	}
	if len(resp.GetDevices()) != 2 {
		t.Fatalf("prepared %d devices, want 2", len(resp.GetDevices()))
	}
	for i, want := range []struct {
		env, iface, mac, ready string
		ips                    []string
	}{
		{"NETDEV_FAST_NIC_INTERFACE=ens1f0", "ens1f0", "b8:ce:f6:00:00:10", "True", []string{"10.0.0.5/24", "fd00::5/64"}},
		{"NETDEV_SLOW_NIC_INTERFACE=ens1f1", "ens1f1", "b8:ce:f6:00:00:11", "False", nil}, // ens1f1 is down
	} {
		d := resp.GetDevices()[i]
		if d.GetRequest() != c.Results[i].Request || d.GetDevice() != c.Results[i].Device || d.GetPool() != "node-1" {
			t.Errorf("device %d answers %s/%s/%s", i, d.GetRequest(), d.GetPool(), d.GetDevice())
		}
		if env := d.GetContainerEdits().GetEnv(); !slices.Equal(env, []string{want.env}) {
			t.Errorf("device %d env = %q, want %q", i, env, want.env)
		}
		nd := d.GetStatus().GetNetworkData()
		if nd.GetInterfaceName() != want.iface || nd.GetHardwareAddress() != want.mac || !slices.Equal(nd.GetIps(), want.ips) {
			t.Errorf("device %d network data = %v, want %s %s %v", i, nd, want.iface, want.mac, want.ips)
		}
		conds := d.GetStatus().GetConditions()
		if len(conds) != 1 || conds[0].GetType() != "Ready" || conds[0].GetStatus() != want.ready {
			t.Errorf("device %d conditions = %v, want Ready=%s", i, conds, want.ready)
		}
	}
}

func policyError(t *testing.T, err error, code abi.ErrorCode, field string) {
	t.Helper()
	pe, ok := errors.AsType[*abi.PolicyError](err)
	if !ok {
		t.Fatalf("error = %v, want a policy error", err)
	}
	if pe.Code != code || pe.Field != field {
		t.Fatalf("policy error = %v (%s, field %q), want %s, field %q", pe, pe.Code, pe.Field, code, field)
	}
}

// TestClaimsHoldTheirDevices: a device another claim holds is refused until
// that claim is released; unknown devices are refused; a repeated Allocate of
// the same claim succeeds; a rebuilt instance learns the holders from restore.
func TestClaimsHoldTheirDevices(t *testing.T) {
	ctx := context.Background()
	topo := machineTopology(t, topologytest.Server2Socket4NodesInterleaved(), nil)
	client := load(t, topo, nil)
	first := claim("uid-1", result("nic", "ens2f0"))
	prepared, err := client.Allocate(ctx, &abi.AllocateRequest{Claim: first})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Allocate(ctx, &abi.AllocateRequest{Claim: first}); err != nil {
		t.Fatalf("repeated Allocate of the same claim: %v", err)
	}
	second := claim("uid-2", result("nic", "ens2f0"))
	_, err = client.Allocate(ctx, &abi.AllocateRequest{Claim: second})
	policyError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "claim.results[0].device")
	if !strings.Contains(err.Error(), "uid-1") {
		t.Errorf("error %q does not name the holder", err)
	}
	_, err = client.Allocate(ctx, &abi.AllocateRequest{Claim: claim("uid-3", result("nic", "ens1f0"), result("nic", "lo"))})
	policyError(t, err, abi.ErrorCode_ERROR_CODE_NOT_FOUND, "claim.results[1].device")

	// A rebuilt instance restores the holder from the journal.
	restored := load(t, topo, &abi.RestoreState{Claims: []*abi.PreparedClaim{{Claim: first, Allocation: prepared}}})
	_, err = restored.Allocate(ctx, &abi.AllocateRequest{Claim: second})
	policyError(t, err, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "claim.results[0].device")

	if _, err := restored.Release(ctx, &abi.ReleaseRequest{Claim: first}); err != nil {
		t.Fatal(err)
	}
	if _, err := restored.Release(ctx, &abi.ReleaseRequest{Claim: first}); err != nil {
		t.Fatalf("second Release of the same claim: %v", err)
	}
	if _, err := restored.Allocate(ctx, &abi.AllocateRequest{Claim: second}); err != nil {
		t.Fatalf("Allocate after the holder's Release: %v", err)
	}
	dump, err := restored.DumpState(ctx, &abi.DumpStateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"claims":{"uid-2":["ens2f0"]}`; !strings.Contains(string(dump.GetJson()), want) {
		t.Errorf("DumpState = %s, want it to contain %s", dump.GetJson(), want)
	}
}

func offered(t *testing.T, client *abi.Client) []string {
	t.Helper()
	resp, err := client.Devices(context.Background(), &abi.DevicesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Devices(resp); err != nil {
		t.Fatalf("Devices answer fails validation: %v", err)
	}
	var names []string
	for _, d := range resp.GetDevices() {
		names = append(names, d.GetName())
	}
	return names
}

// TestConfiguration: exclude and includeVirtual select the offered interfaces
// at Init and on Reconfigure; a bad configuration is refused naming its field
// and the one in force stays; claims keep their devices across a change.
func TestConfiguration(t *testing.T) {
	ctx := context.Background()
	topo := machineTopology(t, topologytest.Desktop1Socket(), nil) // eno1, plus lo and docker0 (virtual)
	p, err := wasm.Load(ctx, "netdev", netdev.Module, wasm.WithCacheDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	client := abi.NewClient(p)
	_, err = client.Init(ctx, &abi.InitRequest{Topology: topo, Config: []byte("exclude: eth0")})
	policyError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "config.exclude")
	if _, err := client.Init(ctx, &abi.InitRequest{Topology: topo, Config: []byte("includeVirtual: true\nexclude:\n  - lo\n")}); err != nil {
		t.Fatal(err)
	}
	if got, want := offered(t, client), []string{"docker0", "eno1"}; !slices.Equal(got, want) {
		t.Fatalf("offered %v, want %v", got, want)
	}
	c := claim("uid-1", result("nic", "eno1"))
	if _, err := client.Allocate(ctx, &abi.AllocateRequest{Claim: c}); err != nil {
		t.Fatal(err)
	}

	for config, field := range map[string]string{"interfaces: [eth0]": "config.interfaces", "includeVirtual: maybe": "config.includeVirtual", "exclude: [eno1": "config"} {
		_, err = client.Reconfigure(ctx, &abi.ReconfigureRequest{Config: []byte(config)})
		policyError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, field)
	}
	if got, want := offered(t, client), []string{"docker0", "eno1"}; !slices.Equal(got, want) {
		t.Fatalf("after refused Reconfigures: offered %v, want %v", got, want)
	}

	if _, err := client.Reconfigure(ctx, &abi.ReconfigureRequest{Config: []byte(`{"exclude": ["eno*"]}`)}); err != nil {
		t.Fatal(err)
	}
	if got := offered(t, client); len(got) != 0 {
		t.Fatalf("after excluding eno* and virtual interfaces: offered %v", got)
	}
	_, err = client.Allocate(ctx, &abi.AllocateRequest{Claim: claim("uid-2", result("nic", "eno1"))})
	policyError(t, err, abi.ErrorCode_ERROR_CODE_NOT_FOUND, "claim.results[0].device")
	dump, err := client.DumpState(ctx, &abi.DumpStateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"claims":{"uid-1":["eno1"]}`; !strings.Contains(string(dump.GetJson()), want) {
		t.Errorf("DumpState = %s: the claim lost its device on Reconfigure", dump.GetJson())
	}
}

// TestSealedMetadata: the committed module is sealed with what Info answers.
func TestSealedMetadata(t *testing.T) {
	md, err := wasm.ReadMetadata(netdev.Module)
	if err != nil || md == nil {
		t.Fatalf("ReadMetadata = %v, %v; want the sealed section (run make policies)", md, err)
	}
	want := []abi.Method{abi.Method_METHOD_INIT, abi.Method_METHOD_RECONFIGURE, abi.Method_METHOD_DEVICES,
		abi.Method_METHOD_ALLOCATE, abi.Method_METHOD_RELEASE, abi.Method_METHOD_DUMP_STATE}
	if md.GetName() != "netdev" || md.GetAbiMajor() != abi.ABIMajor || !strings.HasPrefix(md.GetSdk(), "nriwasm-rust/") || !slices.Equal(md.GetCapabilities(), want) {
		t.Fatalf("metadata = %v", md)
	}
}
