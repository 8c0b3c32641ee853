//go:build integration

package claimstatus_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	resourceapply "k8s.io/client-go/applyconfigurations/resource/v1"
	"k8s.io/client-go/kubernetes/fake"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/claimstatus"
)

// TestServerRefusesWhatSetRefuses: each status one past an API limit is
// refused by Set and, sent as it is, by the API server too, so the writer's
// checks are neither looser nor (for these) stricter than the server's.
func TestServerRefusesWhatSetRefuses(t *testing.T) {
	e := newEnv(t)
	ref := e.claim(t, "limits", e.node, "nic-0")
	cond := func(i int, reason string) *metav1apply.ConditionApplyConfiguration {
		c := metav1apply.Condition().WithType(fmt.Sprintf("Cond%d", i)).WithStatus(metav1.ConditionTrue).WithLastTransitionTime(metav1.Now())
		if reason != "" {
			c.WithReason(reason)
		}
		return c
	}
	var ips17, dupIPs []string
	for i := range 17 {
		ips17 = append(ips17, fmt.Sprintf("10.0.0.%d/24", i+1))
	}
	dupIPs = []string{"10.0.0.1/24", "10.0.0.1/24"}
	send := func(entry *resourceapply.AllocatedDeviceStatusApplyConfiguration) error {
		c := resourceapply.ResourceClaim(ref.Name, ref.Namespace).WithStatus(resourceapply.ResourceClaimStatus().WithDevices(entry))
		_, err := e.driver.ResourceV1().ResourceClaims(ref.Namespace).ApplyStatus(context.Background(), c, metav1.ApplyOptions{FieldManager: driver, Force: true})
		return err
	}
	base := func() *resourceapply.AllocatedDeviceStatusApplyConfiguration {
		return resourceapply.AllocatedDeviceStatus().WithDriver(driver).WithPool(e.node).WithDevice("nic-0")
	}
	// The same entry within the limits is accepted: the refusals below are
	// about the limit each case breaks.
	if err := send(base().WithConditions(cond(0, "R")).WithNetworkData(resourceapply.NetworkDeviceData().WithIPs(ips17[:16]...).
		WithInterfaceName(strings.Repeat("e", 256)).WithHardwareAddress(strings.Repeat("a", 128)))); err != nil {
		t.Fatalf("an entry within the limits: %v", err)
	}
	big := `{"a":"` + strings.Repeat("x", 10<<10+1-8) + `"}`
	for _, tc := range []struct {
		name string
		ours *abi.DeviceStatus                                                                                                   // what Set gets
		raw  func(*resourceapply.AllocatedDeviceStatusApplyConfiguration) *resourceapply.AllocatedDeviceStatusApplyConfiguration // sent as is
	}{
		{"9 conditions", &abi.DeviceStatus{Conditions: nConditions(9)}, func(d *resourceapply.AllocatedDeviceStatusApplyConfiguration) *resourceapply.AllocatedDeviceStatusApplyConfiguration {
			for i := range 9 {
				d.WithConditions(cond(i, "R"))
			}
			return d
		}},
		{"condition without reason", &abi.DeviceStatus{Conditions: []*abi.Condition{{Type: "Cond0", Status: "True"}}}, func(d *resourceapply.AllocatedDeviceStatusApplyConfiguration) *resourceapply.AllocatedDeviceStatusApplyConfiguration {
			return d.WithConditions(cond(0, ""))
		}},
		{"17 IPs", &abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{Ips: ips17}}, func(d *resourceapply.AllocatedDeviceStatusApplyConfiguration) *resourceapply.AllocatedDeviceStatusApplyConfiguration {
			return d.WithNetworkData(resourceapply.NetworkDeviceData().WithIPs(ips17...))
		}},
		{"IP without prefix", &abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{Ips: []string{"10.0.0.1"}}}, func(d *resourceapply.AllocatedDeviceStatusApplyConfiguration) *resourceapply.AllocatedDeviceStatusApplyConfiguration {
			return d.WithNetworkData(resourceapply.NetworkDeviceData().WithIPs("10.0.0.1"))
		}},
		{"IP twice", &abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{Ips: dupIPs}}, func(d *resourceapply.AllocatedDeviceStatusApplyConfiguration) *resourceapply.AllocatedDeviceStatusApplyConfiguration {
			return d.WithNetworkData(resourceapply.NetworkDeviceData().WithIPs(dupIPs...))
		}},
		{"interface name 257", &abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{InterfaceName: strings.Repeat("e", 257)}}, func(d *resourceapply.AllocatedDeviceStatusApplyConfiguration) *resourceapply.AllocatedDeviceStatusApplyConfiguration {
			return d.WithNetworkData(resourceapply.NetworkDeviceData().WithInterfaceName(strings.Repeat("e", 257)))
		}},
		{"hardware address 129", &abi.DeviceStatus{NetworkData: &abi.NetworkDeviceData{HardwareAddress: strings.Repeat("a", 129)}}, func(d *resourceapply.AllocatedDeviceStatusApplyConfiguration) *resourceapply.AllocatedDeviceStatusApplyConfiguration {
			return d.WithNetworkData(resourceapply.NetworkDeviceData().WithHardwareAddress(strings.Repeat("a", 129)))
		}},
		{"data 10 KiB + 1", &abi.DeviceStatus{Data: []byte(big)}, func(d *resourceapply.AllocatedDeviceStatusApplyConfiguration) *resourceapply.AllocatedDeviceStatusApplyConfiguration {
			return d.WithData(runtime.RawExtension{Raw: []byte(big)})
		}},
		{"data not an object", &abi.DeviceStatus{Data: []byte(`[1]`)}, func(d *resourceapply.AllocatedDeviceStatusApplyConfiguration) *resourceapply.AllocatedDeviceStatusApplyConfiguration {
			return d.WithData(runtime.RawExtension{Raw: []byte(`[1]`)})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := claimstatus.New(fake.NewClientset(), driver)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Set(ref, []claimstatus.Device{{Pool: e.node, Device: "nic-0", Status: tc.ours}}); err == nil {
				t.Error("Set accepted it")
			}
			err = send(tc.raw(base()))
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Errorf("the API server answered %v, want it refused (Invalid or BadRequest)", err)
			}
		})
	}
}

func nConditions(n int) []*abi.Condition {
	var c []*abi.Condition
	for i := range n {
		c = append(c, &abi.Condition{Type: fmt.Sprintf("Cond%d", i), Status: "True", Reason: "R"})
	}
	return c
}
