//go:build integration

package dra_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/dra"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/host/validate/validatetest"
	"github.com/nriwasm/nriwasm/integration/kubeapi"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

const generatedDriver = "generated.nri.io"

func generated(n int) *abi.DevicesResponse {
	r := &abi.DevicesResponse{}
	for i := range n {
		r.Devices = append(r.Devices, validatetest.ValidDevice(fmt.Sprintf("dev-%04d", i)))
	}
	return r
}

// TestSlicesArePublishedSplitAndUpdated: 1,024 devices become 8 slices of one
// pool on the real API server, written by the driver's service account; a
// smaller device list shrinks the pool to one slice, a larger one grows it
// under a new generation.
func TestSlicesArePublishedSplitAndUpdated(t *testing.T) {
	s := kubeapi.Shared(t)
	m := &devicesManager{devices: make(chan *abi.DevicesResponse, 1), current: generated(1024)}
	start := time.Now()
	n := startDriver(t, s, generatedDriver, m)
	// count is the pool as the API server has it; -1 slices while it is
	// being rewritten (slices of two generations, or a count not yet right).
	count := func() (slices, devices int, generation int64) {
		list := slicesOf(t, s.Client(), generatedDriver, n.name)
		for i, sl := range list {
			if sl.Spec.Pool.Name != n.name {
				t.Fatalf("slice %s: pool %q, want the node's name", sl.Name, sl.Spec.Pool.Name)
			}
			if sl.Spec.Pool.ResourceSliceCount != int64(len(list)) || (i > 0 && sl.Spec.Pool.Generation != generation) {
				return -1, 0, 0
			}
			devices += len(sl.Spec.Devices)
			generation = sl.Spec.Pool.Generation
		}
		return len(list), devices, generation
	}
	testkit.Eventually(t, "8 slices of 1,024 devices", func() bool { sl, d, _ := count(); return sl == 8 && d == 1024 })
	t.Logf("FIGURE publishing 1,024 devices as 8 slices took %v (driver start included)", time.Since(start))
	_, _, gen := count()

	m.devices <- generated(100)
	n.driver.Republish()
	testkit.Eventually(t, "1 slice of 100 devices", func() bool { sl, d, g := count(); return sl == 1 && d == 100 && g >= gen })

	// Growing needs more than one write: the pool's generation is bumped, so
	// the allocator never mixes slices of two versions.
	_, _, gen = count()
	m.devices <- generated(300)
	n.driver.Republish()
	testkit.Eventually(t, "3 slices of 300 devices, a newer generation", func() bool { sl, d, g := count(); return sl == 3 && d == 300 && g > gen })
}

// TestTheAPIServerAgreesWithValidate: every answer host/validate refuses, the
// API server refuses too, and the valid ones it accepts, so the agent's checks
// stop exactly what the API server would.
func TestTheAPIServerAgreesWithValidate(t *testing.T) {
	s := kubeapi.Shared(t)
	nodeName := s.UniqueName("node")
	s.CreateNode(t, nodeName)
	ctx := context.Background()
	for i, c := range validatetest.DeviceCases() {
		t.Run(c.Name, func(t *testing.T) {
			ourErr := validate.Devices(c.Devices)
			res, err := dra.DriverResources(nodeName, c.Devices)
			if err != nil {
				// Not even expressible as a ResourceSlice (a capacity that is
				// no quantity): validate must refuse it first.
				if ourErr == nil {
					t.Fatalf("validate accepts what cannot become a ResourceSlice: %v", err)
				}
				return
			}
			pool := res.Pools[nodeName]
			var apiErr error
			for j, sl := range pool.Slices {
				obj := &resourcev1.ResourceSlice{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-case%d-%d", nodeName, i, j)},
					Spec: resourcev1.ResourceSliceSpec{Driver: generatedDriver, NodeName: &nodeName,
						Pool:    resourcev1.ResourcePool{Name: nodeName + fmt.Sprint(i), Generation: 1, ResourceSliceCount: int64(len(pool.Slices))},
						Devices: sl.Devices, SharedCounters: sl.SharedCounters},
				}
				_, err := s.Client().ResourceV1().ResourceSlices().Create(ctx, obj, metav1.CreateOptions{})
				if err != nil {
					apiErr = errors.Join(apiErr, err)
				}
			}
			switch {
			case ourErr == nil && apiErr != nil:
				t.Errorf("validate accepts what the API server refuses: %v", apiErr)
			case ourErr != nil && apiErr == nil && !c.PoolLevel():
				t.Errorf("validate refuses (%v) what the API server accepts", ourErr)
			case c.PoolLevel() && apiErr != nil:
				t.Errorf("the API server refuses a pool-level case slice by slice: %v", apiErr)
			}
		})
	}
}
