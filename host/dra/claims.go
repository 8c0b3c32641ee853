package dra

import (
	"cmp"
	"slices"

	resourceapi "k8s.io/api/resource/v1"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// claimToABI is the part of claim that concerns driver: its allocation results
// for driver's devices and the opaque configuration meant for driver, class
// configuration first.
func claimToABI(claim *resourceapi.ResourceClaim, driver string) *abi.Claim {
	out := &abi.Claim{Uid: string(claim.UID), Namespace: claim.Namespace, Name: claim.Name}
	alloc := claim.Status.Allocation
	if alloc == nil {
		return out
	}
	for _, r := range alloc.Devices.Results {
		if r.Driver != driver {
			continue
		}
		a := &abi.DeviceAllocation{Request: r.Request, Pool: r.Pool, Device: r.Device}
		if r.ShareID != nil {
			a.ShareId = string(*r.ShareID)
		}
		if r.AdminAccess != nil {
			a.AdminAccess = *r.AdminAccess
		}
		if len(r.ConsumedCapacity) > 0 {
			a.ConsumedCapacity = make(map[string]string, len(r.ConsumedCapacity))
			for name, q := range r.ConsumedCapacity {
				a.ConsumedCapacity[string(name)] = q.String()
			}
		}
		out.Results = append(out.Results, a)
	}
	for _, c := range alloc.Devices.Config {
		if c.Opaque == nil || c.Opaque.Driver != driver {
			continue
		}
		src := abi.DeviceConfigSource_DEVICE_CONFIG_SOURCE_CLAIM
		if c.Source == resourceapi.AllocationConfigSourceClass {
			src = abi.DeviceConfigSource_DEVICE_CONFIG_SOURCE_CLASS
		}
		out.Config = append(out.Config, &abi.DeviceConfig{Requests: c.Requests, Source: src, Parameters: c.Opaque.Parameters.Raw})
	}
	slices.SortStableFunc(out.Config, func(a, b *abi.DeviceConfig) int {
		// CLASS (1) before CLAIM (2).
		return cmp.Compare(a.GetSource(), b.GetSource())
	})
	return out
}
