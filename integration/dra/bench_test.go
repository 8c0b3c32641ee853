//go:build integration

package dra_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/dra/kubelettest"
	"github.com/nriwasm/nriwasm/integration/kubeapi"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

// BenchmarkPublish1024Devices: the time from a changed device list of 1,024
// devices (8 slices) to the API server holding all of it, as the driver's
// service account.
func BenchmarkPublish1024Devices(b *testing.B) {
	s := kubeapi.Shared(b)
	m := &devicesManager{devices: make(chan *abi.DevicesResponse, 1), current: generated(8)}
	n := startDriver(b, s, generatedDriver, m)
	testkit.Eventually(b, "the first slice", func() bool { return len(slicesOf(b, s.Client(), generatedDriver, n.name)) == 1 })
	sizes := []int{1024, 8}
	b.ResetTimer()
	for i := range b.N {
		want := sizes[i%2]
		m.devices <- generated(want)
		n.driver.Republish()
		testkit.Eventually(b, fmt.Sprintf("%d devices", want), func() bool {
			total := 0
			for _, sl := range slicesOf(b, s.Client(), generatedDriver, n.name) {
				total += len(sl.Spec.Devices)
			}
			return total == want
		})
	}
}

// BenchmarkPrepare: kubelet's NodePrepareResources through the stand-in,
// the Wasm topology-aware policy's Allocate, the CDI spec written, and the
// claim's status applied on the API server; each claim is unprepared again
// (not timed) so the CPUs come back.
func BenchmarkPrepare(b *testing.B) {
	s := kubeapi.Shared(b)
	ctx := context.Background()
	nodeName := s.UniqueName("node")
	m := policyManager(b, nodeName)
	n := startDriverOn(b, s, nodeName, taDriver, m)
	ns := s.Namespace(b)
	claims := make([]*resourcev1.ResourceClaim, 16)
	for i := range claims {
		claims[i] = s.CreateAllocatedClaim(b, ns, fmt.Sprintf("bench-%d", i), nodeName, resourcev1.DeviceRequestAllocationResult{
			Request: "cpus", Driver: taDriver, Pool: nodeName, Device: fmt.Sprintf("cpudevnuma%03d", i%4),
			ConsumedCapacity: map[resourcev1.QualifiedName]resource.Quantity{"dra.cpu/cpu": resource.MustParse("1")},
		})
	}
	b.ResetTimer()
	var statusWait time.Duration
	for i := range b.N {
		c := claims[i%len(claims)]
		ref := kubelettest.Claim{Namespace: ns, Name: c.Name, UID: string(c.UID)}
		if _, err := n.plugin.Prepare(ctx, ref); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		testkit.Eventually(b, "the status", func() bool {
			got, err := s.Client().ResourceV1().ResourceClaims(ns).Get(ctx, c.Name, metav1.GetOptions{})
			return err == nil && len(got.Status.Devices) == 1
		})
		statusWait += time.Since(start)
		b.StopTimer()
		if err := n.plugin.Unprepare(ctx, ref); err != nil {
			b.Fatal(err)
		}
		testkit.Eventually(b, "the status cleared", func() bool {
			got, err := s.Client().ResourceV1().ResourceClaims(ns).Get(ctx, c.Name, metav1.GetOptions{})
			return err == nil && len(got.Status.Devices) == 0
		})
		b.StartTimer()
	}
	b.ReportMetric(float64(statusWait.Microseconds())/float64(b.N), "status-µs/op")
}
