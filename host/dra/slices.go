package dra

import (
	"fmt"
	"maps"
	"slices"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/resourceslice"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// ResourceSlice limits (k8s.io/api/resource/v1): devices per slice, fewer when
// any device has taints or consumes counters, and counter sets per slice (a
// slice holds either devices or counter sets).
const (
	maxDevicesPerSlice         = resourceapi.ResourceSliceMaxDevices
	maxAdvancedDevicesPerSlice = resourceapi.ResourceSliceMaxDevicesWithAdvancedFeatures
	maxCounterSetsPerSlice     = resourceapi.ResourceSliceMaxCounterSets
)

// DriverResources turns the policy's (already validated) devices into one pool
// named after the node, split into as many slices as the API's limits need:
// counter sets first, 8 to a slice, then devices in the policy's order, 128 to
// a slice or 64 where a device has taints or consumes counters. A node without
// devices still publishes one empty slice: the driver is up, with nothing to
// offer.
func DriverResources(node string, r *abi.DevicesResponse) (resourceslice.DriverResources, error) {
	var out []resourceslice.Slice
	sets := r.GetSharedCounters()
	for start := 0; start < len(sets); start += maxCounterSetsPerSlice {
		var s resourceslice.Slice
		for _, cs := range sets[start:min(start+maxCounterSetsPerSlice, len(sets))] {
			counters, err := countersOf(cs.GetCounters())
			if err != nil {
				return resourceslice.DriverResources{}, fmt.Errorf("counter set %q: %w", cs.GetName(), err)
			}
			s.SharedCounters = append(s.SharedCounters, resourceapi.CounterSet{Name: cs.GetName(), Counters: counters})
		}
		out = append(out, s)
	}
	var cur resourceslice.Slice
	curAdvanced := false
	for _, d := range r.GetDevices() {
		dev, err := deviceOf(d)
		if err != nil {
			return resourceslice.DriverResources{}, fmt.Errorf("device %q: %w", d.GetName(), err)
		}
		advanced := len(d.GetTaints()) > 0 || len(d.GetConsumesCounters()) > 0
		limit := maxDevicesPerSlice
		if curAdvanced || advanced {
			limit = maxAdvancedDevicesPerSlice
		}
		if len(cur.Devices) >= limit {
			out = append(out, cur)
			cur, curAdvanced = resourceslice.Slice{}, false
		}
		cur.Devices = append(cur.Devices, dev)
		curAdvanced = curAdvanced || advanced
	}
	if len(cur.Devices) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{node: {Slices: out}}}, nil
}

func deviceOf(d *abi.Device) (resourceapi.Device, error) {
	dev := resourceapi.Device{Name: d.GetName()}
	if len(d.GetAttributes()) > 0 {
		dev.Attributes = make(map[resourceapi.QualifiedName]resourceapi.DeviceAttribute, len(d.GetAttributes()))
	}
	for name, a := range d.GetAttributes() {
		var v resourceapi.DeviceAttribute
		switch x := a.GetValue().(type) {
		case *abi.DeviceAttribute_IntValue:
			v.IntValue = &x.IntValue
		case *abi.DeviceAttribute_BoolValue:
			v.BoolValue = &x.BoolValue
		case *abi.DeviceAttribute_StringValue:
			v.StringValue = &x.StringValue
		case *abi.DeviceAttribute_VersionValue:
			v.VersionValue = &x.VersionValue
		}
		dev.Attributes[resourceapi.QualifiedName(name)] = v
	}
	if len(d.GetCapacities()) > 0 {
		dev.Capacity = make(map[resourceapi.QualifiedName]resourceapi.DeviceCapacity, len(d.GetCapacities()))
	}
	for _, name := range slices.Sorted(maps.Keys(d.GetCapacities())) {
		c, err := capacityOf(d.GetCapacities()[name])
		if err != nil {
			return dev, fmt.Errorf("capacity %q: %w", name, err)
		}
		dev.Capacity[resourceapi.QualifiedName(name)] = c
	}
	for _, cc := range d.GetConsumesCounters() {
		counters, err := countersOf(cc.GetCounters())
		if err != nil {
			return dev, fmt.Errorf("consumes counter set %q: %w", cc.GetCounterSet(), err)
		}
		dev.ConsumesCounters = append(dev.ConsumesCounters, resourceapi.DeviceCounterConsumption{CounterSet: cc.GetCounterSet(), Counters: counters})
	}
	for _, t := range d.GetTaints() {
		dev.Taints = append(dev.Taints, resourceapi.DeviceTaint{Key: t.GetKey(), Value: t.GetValue(), Effect: taintEffects[t.GetEffect()]})
	}
	if d.GetAllowMultipleAllocations() {
		yes := true
		dev.AllowMultipleAllocations = &yes
	}
	return dev, nil
}

var taintEffects = map[abi.DeviceTaintEffect]resourceapi.DeviceTaintEffect{
	abi.DeviceTaintEffect_DEVICE_TAINT_EFFECT_NO_SCHEDULE: resourceapi.DeviceTaintEffectNoSchedule,
	abi.DeviceTaintEffect_DEVICE_TAINT_EFFECT_NO_EXECUTE:  resourceapi.DeviceTaintEffectNoExecute,
	abi.DeviceTaintEffect_DEVICE_TAINT_EFFECT_NONE:        resourceapi.DeviceTaintEffectNone,
}

func capacityOf(c *abi.DeviceCapacity) (resourceapi.DeviceCapacity, error) {
	v, err := resource.ParseQuantity(c.GetValue())
	if err != nil {
		return resourceapi.DeviceCapacity{}, err
	}
	out := resourceapi.DeviceCapacity{Value: v}
	p := c.GetRequestPolicy()
	if p == nil {
		return out, nil
	}
	rp := &resourceapi.CapacityRequestPolicy{}
	if rp.Default, err = optionalQuantity(p.GetDefault()); err != nil {
		return out, err
	}
	for _, s := range p.GetValidValues() {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return out, err
		}
		rp.ValidValues = append(rp.ValidValues, q)
	}
	if r := p.GetValidRange(); r != nil {
		rr := &resourceapi.CapacityRequestPolicyRange{}
		if rr.Min, err = optionalQuantity(r.GetMin()); err != nil {
			return out, err
		}
		if rr.Max, err = optionalQuantity(r.GetMax()); err != nil {
			return out, err
		}
		if rr.Step, err = optionalQuantity(r.GetStep()); err != nil {
			return out, err
		}
		rp.ValidRange = rr
	}
	out.RequestPolicy = rp
	return out, nil
}

func optionalQuantity(s string) (*resource.Quantity, error) {
	if s == "" {
		return nil, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return nil, err
	}
	return &q, nil
}

func countersOf(cs map[string]string) (map[string]resourceapi.Counter, error) {
	out := make(map[string]resourceapi.Counter, len(cs))
	for name, s := range cs {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, fmt.Errorf("counter %q: %w", name, err)
		}
		out[name] = resourceapi.Counter{Value: q}
	}
	return out, nil
}
