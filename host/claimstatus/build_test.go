package claimstatus_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/claimstatus"
)

func TestCanonicalCIDR(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "10.0.0.1/24", want: "10.0.0.1/24"},
		{in: "192.168.7.0/32", want: "192.168.7.0/32"},
		{in: "fd00::1/64", want: "fd00::1/64"},
		{in: "FD00:0:0:0::1/64", want: "fd00::1/64"},
		{in: "2001:db8:0:0:1:0:0:1/48", want: "2001:db8::1:0:0:1/48"},
		{in: "::ffff:10.1.2.3/120", want: "10.1.2.3/24"},
		{in: "::ffff:10.1.2.3/64", err: "at least 96"},
		{in: "10.0.0.1", err: "CIDR form"},
		{in: "fd00::1", err: "CIDR form"},
		{in: "10.0.0.1/33", err: "CIDR form"},
		{in: "010.0.0.1/24", err: "CIDR form"},
		{in: "fe80::1%eth0/64", err: "CIDR form"},
		{in: "", err: "CIDR form"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := claimstatus.CanonicalCIDR(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("CanonicalCIDR(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("CanonicalCIDR(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func conds(n int) []*abi.Condition {
	var c []*abi.Condition
	for i := range n {
		c = append(c, &abi.Condition{Type: fmt.Sprintf("Type%d", i), Status: "True", Reason: "Because"})
	}
	return c
}

func ips(n int) []string {
	var s []string
	for i := range n {
		s = append(s, fmt.Sprintf("10.0.0.%d/24", i+1))
	}
	return s
}

// jsonOfSize is a JSON object of exactly n bytes (n ≥ 8).
func jsonOfSize(n int) []byte { return []byte(`{"a":"` + strings.Repeat("x", n-8) + `"}`) }

func TestSetRefusesBadInput(t *testing.T) {
	ok := func() *abi.DeviceStatus { return &abi.DeviceStatus{Conditions: conds(1)} }
	dev := func(s *abi.DeviceStatus) []claimstatus.Device {
		return []claimstatus.Device{{Pool: "node-1", Device: "cpu-0", Status: s}}
	}
	for _, tc := range []struct {
		name    string
		claim   claimstatus.ClaimRef
		devices []claimstatus.Device
		want    []string // substrings of the error: the field and the limit
	}{
		{"no uid", claimstatus.ClaimRef{Namespace: "ns", Name: "c"}, dev(ok()), []string{"claim uid", "required"}},
		{"9 conditions", ref, dev(&abi.DeviceStatus{Conditions: conds(9)}), []string{"devices[0].status.conditions", "at most 8"}},
		{"condition without reason", ref, dev(&abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Ready", Status: "True"}}}), []string{"devices[0].status.conditions[0].reason", "Required"}},
		{"condition reason form", ref, dev(&abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Ready", Status: "True", Reason: "not ok"}}}), []string{"devices[0].status.conditions[0].reason", "condition reason"}},
		{"condition status", ref, dev(&abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Ready", Status: "Yes", Reason: "R"}}}), []string{"devices[0].status.conditions[0].status", "True, False or Unknown"}},
		{"duplicate condition type", ref, dev(&abi.DeviceStatus{Conditions: append(conds(1), conds(1)...)}), []string{"devices[0].status.conditions[1]", "Duplicate"}},
		{"data not an object", ref, dev(&abi.DeviceStatus{Data: []byte(`[1,2]`)}), []string{"devices[0].status.data", "JSON object"}},
		{"data null", ref, dev(&abi.DeviceStatus{Data: []byte(`null`)}), []string{"devices[0].status.data", "JSON object"}},
		{"data two objects", ref, dev(&abi.DeviceStatus{Data: []byte(`{} {}`)}), []string{"devices[0].status.data", "JSON object"}},
		{"data 10 KiB + 1", ref, dev(&abi.DeviceStatus{Data: jsonOfSize(10<<10 + 1)}), []string{"devices[0].status.data", "10 KiB"}},
		{"data escaped beyond 10 KiB", ref, dev(&abi.DeviceStatus{Data: []byte(`{"a":"` + strings.Repeat("<", 2000) + `"}`)}), []string{"devices[0].status.data", "10240"}},
		{"17 ips", ref, dev(&abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{Ips: ips(17)}}), []string{"devices[0].status.network_data.ips", "at most 16"}},
		{"ip not cidr", ref, dev(&abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{Ips: []string{"10.0.0.1"}}}), []string{"devices[0].status.network_data.ips[0]", "CIDR"}},
		{"ip duplicate once canonical", ref, dev(&abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{Ips: []string{"fd00::1/64", "FD00:0::1/64"}}}), []string{"devices[0].status.network_data.ips[1]", "Duplicate", "fd00::1/64"}},
		{"interface name 257", ref, dev(&abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{InterfaceName: strings.Repeat("e", 257)}}), []string{"devices[0].status.network_data.interface_name", "256"}},
		{"hardware address 129", ref, dev(&abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{HardwareAddress: strings.Repeat("a", 129)}}), []string{"devices[0].status.network_data.hardware_address", "128"}},
		{"pool", ref, []claimstatus.Device{{Pool: "Node_1", Device: "cpu-0", Status: ok()}}, []string{"devices[0].pool", "RFC 1123"}},
		{"pool missing", ref, []claimstatus.Device{{Device: "cpu-0", Status: ok()}}, []string{"devices[0].pool", "Required"}},
		{"device", ref, []claimstatus.Device{{Pool: "node-1", Device: "cpu.0", Status: ok()}}, []string{"devices[0].device", "cpu.0"}},
		{"share id", ref, []claimstatus.Device{{Pool: "node-1", Device: "cpu-0", ShareID: "ABC", Status: ok()}}, []string{"devices[0].share_id", "UUID"}},
		{"device twice", ref, []claimstatus.Device{{Pool: "p", Device: "d", Status: ok()}, {Pool: "p", Device: "d", Status: ok()}}, []string{"devices[1]", "as devices[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWriter(t, fake.NewClientset(), driver)
			err := w.Set(tc.claim, tc.devices)
			if err == nil {
				t.Fatal("Set accepted it")
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if n := w.Pending(); n != 0 {
				t.Errorf("Pending() = %d after a refused Set, want 0", n)
			}
		})
	}
}

func TestSetRefusesBadDriverName(t *testing.T) {
	w := newWriter(t, fake.NewClientset(), "Not_A_Driver")
	err := w.Set(ref, []claimstatus.Device{{Pool: "p", Device: "d", Status: &abi.DeviceStatus{}}})
	if err == nil || !strings.Contains(err.Error(), "driver") {
		t.Fatalf("Set with driver Not_A_Driver: %v, want an error naming the driver", err)
	}
}

func TestSetAcceptsTheLimits(t *testing.T) {
	w := newWriter(t, fake.NewClientset(), driver)
	err := w.Set(ref, []claimstatus.Device{{
		Pool: "node-1/part.a", Device: "nic-0", ShareID: "0b7c1a4e-2f3d-4c5b-8a9e-1f2e3d4c5b6a",
		Status: &abi.DeviceStatus{
			Conditions: conds(8),
			Data:       jsonOfSize(10 << 10),
			NetworkData: &abi.NetworkDeviceData{
				InterfaceName:   strings.Repeat("e", 256),
				HardwareAddress: strings.Repeat("a", 128),
				Ips:             ips(16),
			},
		},
	}})
	if err != nil {
		t.Fatalf("Set at the limits: %v", err)
	}
	if n := w.Pending(); n != 1 {
		t.Fatalf("Pending() = %d, want 1", n)
	}
}
