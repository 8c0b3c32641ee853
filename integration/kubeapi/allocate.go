//go:build integration

package kubeapi

import (
	"context"
	"fmt"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// classLister serves DeviceClasses from the API server to the allocator.
type classLister struct{ s *Server }

func (l classLister) List() ([]*resourcev1.DeviceClass, error) {
	list, err := l.s.Client().ResourceV1().DeviceClasses().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*resourcev1.DeviceClass, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func (l classLister) Get(name string) (*resourcev1.DeviceClass, error) {
	return l.s.Client().ResourceV1().DeviceClasses().Get(context.Background(), name, metav1.GetOptions{})
}

// Allocate runs the scheduler's allocator for claim on node against the
// slices on the API server and stores the allocation as the scheduler would.
// It fails the test if nothing can be allocated; TryAllocate returns that
// as an error.
func (s *Server) Allocate(t testing.TB, claim *resourcev1.ResourceClaim, nodeName string) *resourcev1.ResourceClaim {
	t.Helper()
	c, err := s.TryAllocate(context.Background(), claim, nodeName)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TryAllocate is Allocate returning its error. Allocations of other claims
// are not taken into account: the caller allocates one claim at a time.
func (s *Server) TryAllocate(ctx context.Context, claim *resourcev1.ResourceClaim, nodeName string) (*resourcev1.ResourceClaim, error) {
	list, err := s.Client().ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var slices []*resourcev1.ResourceSlice
	for i := range list.Items {
		slices = append(slices, &list.Items[i])
	}
	features := structured.Features{ConsumableCapacity: true, PartitionableDevices: true, DeviceTaints: true}
	alloc, err := structured.NewAllocator(ctx, features, structured.AllocatedState{
		AllocatedDevices: sets.New[structured.DeviceID](), AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity: structured.NewConsumedCapacityCollection(),
	}, classLister{s}, slices, cel.NewCache(10, cel.Features{EnableConsumableCapacity: true}))
	if err != nil {
		return nil, err
	}
	node, err := s.Client().CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	results, err := alloc.Allocate(ctx, node, []*resourcev1.ResourceClaim{claim})
	if err != nil || len(results) != 1 {
		return nil, fmt.Errorf("the allocator found no allocation (%v) in %d slices", err, len(slices))
	}
	claim.Status.Allocation = &results[0]
	claim, err = s.Client().ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("storing the allocation: %w", err)
	}
	return claim, nil
}
