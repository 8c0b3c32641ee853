package topologyaware_test

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// BenchmarkCreateContainer times CreateContainer through the native runner
// (the real encode and decode path) on Server4Socket144CPU with 1,000 live
// containers: 960 Burstable 100m and 40 exclusive single CPUs. Each new
// container is removed again, untimed, so the state stays the same size.
func BenchmarkCreateContainer(b *testing.B) {
	for _, bc := range []struct {
		name string
		s    spec
	}{
		{"shared", burstable("bench", 100)},
		{"exclusive", guaranteed("bench", 2000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := newHarness(b, "Server4Socket144CPU", "")
			for i, id := range policytest.IDs(1000, "live-") {
				s := burstable(id, 100)
				if i%25 == 0 {
					s = guaranteed(id, 1000)
				}
				h.Create(s)
			}
			ctx := context.Background()
			req := bc.s.Request()
			rm := &abi.RemoveContainerRequest{Pod: req.Pod, Container: req.Container}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				resp, err := h.Client.CreateContainer(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if resp.Adjustment.CpusetCpus == "" {
					b.Fatal("no cpuset")
				}
				if _, err := h.Client.RemoveContainer(ctx, rm); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
