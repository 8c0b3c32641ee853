package dra

import (
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/host/validate/validatetest"
)

func devices(n int, edit func(i int, d *abi.Device)) *abi.DevicesResponse {
	r := &abi.DevicesResponse{}
	for i := range n {
		d := validatetest.ValidDevice(fmt.Sprintf("dev-%04d", i))
		if edit != nil {
			edit(i, d)
		}
		r.Devices = append(r.Devices, d)
	}
	return r
}

func sliceSizes(t *testing.T, r *abi.DevicesResponse) (devs []int, sets []int) {
	t.Helper()
	if err := validate.Devices(r); err != nil {
		t.Fatalf("test devices invalid: %v", err)
	}
	res, err := DriverResources("node-a", r)
	if err != nil {
		t.Fatal(err)
	}
	pool, ok := res.Pools["node-a"]
	if !ok || len(res.Pools) != 1 {
		t.Fatalf("pools = %v, want one named after the node", res.Pools)
	}
	for _, s := range pool.Slices {
		if len(s.Devices) > 0 && len(s.SharedCounters) > 0 {
			t.Fatal("a slice holds both devices and counter sets")
		}
		devs, sets = append(devs, len(s.Devices)), append(sets, len(s.SharedCounters))
	}
	return devs, sets
}

func TestSlicesSplitAtTheAPILimits(t *testing.T) {
	tainted := func(i int, d *abi.Device) {
		if i%2 == 1 {
			d.Taints = []*abi.DeviceTaint{{Key: "example.com/t", Effect: abi.DeviceTaintEffect_DEVICE_TAINT_EFFECT_NO_SCHEDULE}}
		}
	}
	tests := []struct {
		name     string
		r        *abi.DevicesResponse
		wantDevs []int
	}{
		{"none: one empty slice", &abi.DevicesResponse{}, []int{0}},
		{"128 fit one slice", devices(128, nil), []int{128}},
		{"1024 split into 8", devices(1024, nil), []int{128, 128, 128, 128, 128, 128, 128, 128}},
		{"129", devices(129, nil), []int{128, 1}},
		{"taints: 64 a slice", devices(200, tainted), []int{64, 64, 64, 8}},
		{"a tainted device after 100 plain ones", devices(101, func(i int, d *abi.Device) {
			if i == 100 {
				tainted(1, d)
			}
		}), []int{100, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := sliceSizes(t, tt.r)
			if fmt.Sprint(got) != fmt.Sprint(tt.wantDevs) {
				t.Errorf("devices per slice = %v, want %v", got, tt.wantDevs)
			}
		})
	}
}

func TestCounterSetsGetTheirOwnSlices(t *testing.T) {
	r := devices(70, func(i int, d *abi.Device) {
		d.ConsumesCounters = []*abi.DeviceCounterConsumption{{CounterSet: fmt.Sprintf("set-%d", i%10), Counters: map[string]string{"cores": "1"}}}
	})
	for i := range 10 {
		r.SharedCounters = append(r.SharedCounters, &abi.CounterSet{Name: fmt.Sprintf("set-%d", i), Counters: map[string]string{"cores": "64"}})
	}
	devs, sets := sliceSizes(t, r)
	if fmt.Sprint(sets) != "[8 2 0 0]" || fmt.Sprint(devs) != "[0 0 64 6]" {
		t.Errorf("counter sets per slice %v, devices per slice %v; want [8 2 0 0] and [0 0 64 6]", sets, devs)
	}
}

func TestDeviceFieldsCarryOver(t *testing.T) {
	d := validatetest.ValidDevice("dev-0")
	d.AllowMultipleAllocations = true
	d.Capacities["dra.cpu/cpu"] = &abi.DeviceCapacity{Value: "16", RequestPolicy: &abi.CapacityRequestPolicy{
		Default: "1", ValidRange: &abi.CapacityRequestPolicyRange{Min: "1", Max: "16", Step: "1"}}}
	res, err := DriverResources("node-a", &abi.DevicesResponse{Devices: []*abi.Device{d}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Pools["node-a"].Slices[0].Devices[0]
	if *got.Attributes["model"].StringValue != d.Attributes["model"].GetStringValue() ||
		*got.Attributes["resource.kubernetes.io/numaNode"].IntValue != 1 ||
		*got.Attributes["smt"].BoolValue != true ||
		*got.Attributes["driverVersion"].VersionValue != "1.2.3-rc.1+build.5" {
		t.Errorf("attributes = %+v", got.Attributes)
	}
	c := got.Capacity["dra.cpu/cpu"]
	if c.Value.String() != "16" || c.RequestPolicy.ValidRange.Max.String() != "16" || c.RequestPolicy.Default.String() != "1" {
		t.Errorf("capacity = %+v", c)
	}
	if got.AllowMultipleAllocations == nil || !*got.AllowMultipleAllocations {
		t.Error("allowMultipleAllocations lost")
	}
}
