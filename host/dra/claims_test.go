package dra

import (
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func TestClaimToABIKeepsOnlyThisDriversPart(t *testing.T) {
	share := types.UID("share-1")
	claim := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "u1"},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
			Results: []resourceapi.DeviceRequestAllocationResult{
				{Request: "cpus", Driver: "me.nri.io", Pool: "node-a", Device: "cpudevnuma000", ShareID: &share,
					ConsumedCapacity: map[resourceapi.QualifiedName]resource.Quantity{"dra.cpu/cpu": resource.MustParse("4")}},
				{Request: "gpu", Driver: "gpu.example.com", Pool: "node-a", Device: "gpu-0"},
			},
			Config: []resourceapi.DeviceAllocationConfiguration{
				{Source: resourceapi.AllocationConfigSourceClaim, Requests: []string{"cpus"}, DeviceConfiguration: resourceapi.DeviceConfiguration{
					Opaque: &resourceapi.OpaqueDeviceConfiguration{Driver: "me.nri.io", Parameters: runtime.RawExtension{Raw: []byte(`{"claim":1}`)}}}},
				{Source: resourceapi.AllocationConfigSourceClass, DeviceConfiguration: resourceapi.DeviceConfiguration{
					Opaque: &resourceapi.OpaqueDeviceConfiguration{Driver: "gpu.example.com", Parameters: runtime.RawExtension{Raw: []byte(`{}`)}}}},
				{Source: resourceapi.AllocationConfigSourceClass, DeviceConfiguration: resourceapi.DeviceConfiguration{
					Opaque: &resourceapi.OpaqueDeviceConfiguration{Driver: "me.nri.io", Parameters: runtime.RawExtension{Raw: []byte(`{"class":1}`)}}}},
			},
		}}},
	}
	want := &abi.Claim{Uid: "u1", Namespace: "ns", Name: "c",
		Results: []*abi.DeviceAllocation{{Request: "cpus", Pool: "node-a", Device: "cpudevnuma000", ShareId: "share-1",
			ConsumedCapacity: map[string]string{"dra.cpu/cpu": "4"}}},
		Config: []*abi.DeviceConfig{
			{Source: abi.DeviceConfigSource_DEVICE_CONFIG_SOURCE_CLASS, Parameters: []byte(`{"class":1}`)},
			{Source: abi.DeviceConfigSource_DEVICE_CONFIG_SOURCE_CLAIM, Requests: []string{"cpus"}, Parameters: []byte(`{"claim":1}`)},
		},
	}
	if got := claimToABI(claim, "me.nri.io"); !got.EqualVT(want) {
		t.Errorf("claimToABI =\n%v\nwant\n%v", got, want)
	}
}
