// Package validatetest holds DRA device answers that break one API rule each,
// with the field host/validate names for it. validate's own tests check that
// it refuses them; the API-server integration tests check that the real API
// server refuses them too, so the host's checks never drift from the API's.
package validatetest

import (
	"fmt"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// DeviceCase is a DevicesResponse that breaks one rule.
type DeviceCase struct {
	Name    string
	Devices *abi.DevicesResponse
	// Field is the field validate.Devices refuses ("" for a valid answer).
	Field string
}

// PoolLevel reports whether c breaks a rule across slices (a consumption
// naming a counter set or counter the pool does not declare): the API server
// checks each slice alone and accepts it; the slice controller and the
// scheduler's allocator refuse the pool.
func (c DeviceCase) PoolLevel() bool {
	return c.Name == "unknown counter set" || c.Name == "undeclared counter"
}

// ValidDevice is a device that uses every kind of field within its limits.
func ValidDevice(name string) *abi.Device {
	return &abi.Device{
		Name: name,
		Attributes: map[string]*abi.DeviceAttribute{
			"resource.kubernetes.io/numaNode": {Value: &abi.DeviceAttribute_IntValue{IntValue: 1}},
			"smt":                             {Value: &abi.DeviceAttribute_BoolValue{BoolValue: true}},
			"model":                           {Value: &abi.DeviceAttribute_StringValue{StringValue: strings.Repeat("x", 64)}},
			"driverVersion":                   {Value: &abi.DeviceAttribute_VersionValue{VersionValue: "1.2.3-rc.1+build.5"}},
		},
		Capacities: map[string]*abi.DeviceCapacity{"dra.cpu/cpu": {Value: "16"}, "memory": {Value: "64Gi"}},
	}
}

func one(d *abi.Device) *abi.DevicesResponse { return &abi.DevicesResponse{Devices: []*abi.Device{d}} }

func with(edit func(d *abi.Device)) *abi.DevicesResponse {
	d := ValidDevice("dev-0")
	edit(d)
	return one(d)
}

func counted() *abi.DevicesResponse {
	d := ValidDevice("dev-0")
	d.ConsumesCounters = []*abi.DeviceCounterConsumption{{CounterSet: "set-a", Counters: map[string]string{"cores": "4"}}}
	return &abi.DevicesResponse{
		Devices:        []*abi.Device{d},
		SharedCounters: []*abi.CounterSet{{Name: "set-a", Counters: map[string]string{"cores": "64"}}},
	}
}

// DeviceCases are a valid answer and answers breaking one rule each.
func DeviceCases() []DeviceCase {
	many := map[string]*abi.DeviceAttribute{}
	for i := range 33 {
		many[fmt.Sprintf("a%d", i)] = &abi.DeviceAttribute{Value: &abi.DeviceAttribute_IntValue{IntValue: int64(i)}}
	}
	return []DeviceCase{
		{"valid", one(ValidDevice("dev-0")), ""},
		{"valid with counters", counted(), ""},
		{"device name not a DNS label", one(ValidDevice("Dev_0")), "devices[0].name"},
		{"device name too long", one(ValidDevice(strings.Repeat("d", 64))), "devices[0].name"},
		{"33 attributes", with(func(d *abi.Device) { d.Attributes = many; d.Capacities = nil }), "devices[0] (dev-0)"},
		{"string value of 65", with(func(d *abi.Device) {
			d.Attributes["model"] = &abi.DeviceAttribute{Value: &abi.DeviceAttribute_StringValue{StringValue: strings.Repeat("x", 65)}}
		}), "devices[0] (dev-0).attributes.model"},
		{"version not semver", with(func(d *abi.Device) {
			d.Attributes["driverVersion"] = &abi.DeviceAttribute{Value: &abi.DeviceAttribute_VersionValue{VersionValue: "v1.2"}}
		}), "devices[0] (dev-0).attributes.driverVersion"},
		{"attribute without value", with(func(d *abi.Device) { d.Attributes["empty"] = &abi.DeviceAttribute{} }),
			"devices[0] (dev-0).attributes.empty"},
		{"attribute name not a C identifier", with(func(d *abi.Device) {
			d.Attributes["numa-node"] = &abi.DeviceAttribute{Value: &abi.DeviceAttribute_IntValue{IntValue: 1}}
		}), "devices[0] (dev-0).attributes.numa-node"},
		{"attribute name of 33", with(func(d *abi.Device) {
			d.Attributes[strings.Repeat("a", 33)] = &abi.DeviceAttribute{Value: &abi.DeviceAttribute_IntValue{IntValue: 1}}
		}), "devices[0] (dev-0).attributes." + strings.Repeat("a", 33)},
		{"attribute domain not a subdomain", with(func(d *abi.Device) {
			d.Attributes["Bad_Domain/x"] = &abi.DeviceAttribute{Value: &abi.DeviceAttribute_IntValue{IntValue: 1}}
		}), "devices[0] (dev-0).attributes.Bad_Domain/x"},
		{"capacity not a quantity", with(func(d *abi.Device) { d.Capacities["memory"] = &abi.DeviceCapacity{Value: "lots"} }),
			"devices[0] (dev-0).capacities.memory.value"},
		{"request policy without multiple allocations", with(func(d *abi.Device) {
			d.Capacities["memory"] = &abi.DeviceCapacity{Value: "64Gi", RequestPolicy: &abi.CapacityRequestPolicy{Default: "1Gi"}}
		}), "devices[0] (dev-0).capacities.memory.request_policy"},
		{"step beyond the capacity", with(func(d *abi.Device) {
			d.AllowMultipleAllocations = true
			d.Capacities["dra.cpu/cpu"] = &abi.DeviceCapacity{Value: "1", RequestPolicy: &abi.CapacityRequestPolicy{Default: "1",
				ValidRange: &abi.CapacityRequestPolicyRange{Min: "1", Step: "1"}}}
		}), "devices[0] (dev-0).capacities.dra.cpu/cpu.request_policy.valid_range.step"},
		{"a range's default below min", with(func(d *abi.Device) {
			d.AllowMultipleAllocations = true
			d.Capacities["dra.cpu/cpu"] = &abi.DeviceCapacity{Value: "8", RequestPolicy: &abi.CapacityRequestPolicy{Default: "1",
				ValidRange: &abi.CapacityRequestPolicyRange{Min: "2", Step: "1"}}}
		}), "devices[0] (dev-0).capacities.dra.cpu/cpu.request_policy.valid_range"},
		{"a valid value above the capacity", with(func(d *abi.Device) {
			d.AllowMultipleAllocations = true
			d.Capacities["dra.cpu/cpu"] = &abi.DeviceCapacity{Value: "2", RequestPolicy: &abi.CapacityRequestPolicy{Default: "1",
				ValidValues: []string{"1", "4"}}}
		}), "devices[0] (dev-0).capacities.dra.cpu/cpu.request_policy.valid_values[1]"},
		{"one CPU offered as its only valid value", with(func(d *abi.Device) {
			d.AllowMultipleAllocations = true
			d.Capacities["dra.cpu/cpu"] = &abi.DeviceCapacity{Value: "1", RequestPolicy: &abi.CapacityRequestPolicy{Default: "1",
				ValidValues: []string{"1"}}}
		}), ""},
		{"unknown counter set", func() *abi.DevicesResponse {
			r := counted()
			r.Devices[0].ConsumesCounters[0].CounterSet = "set-b"
			return r
		}(), "devices[0] (dev-0).consumes_counters[0].counter_set"},
		{"undeclared counter", func() *abi.DevicesResponse {
			r := counted()
			r.Devices[0].ConsumesCounters[0].Counters = map[string]string{"threads": "1"}
			return r
		}(), "devices[0] (dev-0).consumes_counters[0].counters.threads"},
		{"counter set name not a DNS label", func() *abi.DevicesResponse {
			r := counted()
			r.SharedCounters[0].Name = "Set_A"
			r.Devices[0].ConsumesCounters = nil
			return r
		}(), "shared_counters[0].name"},
		{"taint key not a label key", with(func(d *abi.Device) {
			d.Taints = []*abi.DeviceTaint{{Key: "bad key", Effect: abi.DeviceTaintEffect_DEVICE_TAINT_EFFECT_NO_SCHEDULE}}
		}), "devices[0] (dev-0).taints[0].key"},
		{"taint without effect", with(func(d *abi.Device) { d.Taints = []*abi.DeviceTaint{{Key: "example.com/broken"}} }),
			"devices[0] (dev-0).taints[0].effect"},
	}
}
