package nri_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
)

// BenchmarkCreateContainerGroup measures CreateContainer end to end, as
// BenchmarkCreateContainer does, with the balloons policy and 200 live
// containers in its default balloon on a 256-CPU node: each create inflates
// the balloon, so the answer moves all 200 as one grouped update, which the
// agent checks, journals and turns into NRI's 200 updates. Each measured
// container is removed again (untimed; its answer deflates the balloon), and
// the benchmark waits for the deflation's 200 updates to reach the runtime
// through UpdateContainers before the next create, so that no create is timed
// while the agent sends them, and drops them, so that the runtime does not
// keep them all.
func BenchmarkCreateContainerGroup(b *testing.B) {
	rt := newRuntime(b)
	rt.start()
	startAgent(b, rt, agentOpts{policy: "balloons", topo: machineTopology(b, "server256", server256())})
	rt.waitSync()
	ctx := context.Background()
	for i := range 20 {
		p := pod(fmt.Sprintf("live%03d", i), "burstable")
		if err := rt.runPod(p); err != nil {
			b.Fatal(err)
		}
		for j := range 10 {
			if _, err := rt.create(p, ctr(p, fmt.Sprintf("c%d", j), 100, 0, 256<<20)); err != nil {
				b.Fatal(err)
			}
		}
	}
	p := pod("bench", "burstable")
	if err := rt.runPod(p); err != nil {
		b.Fatal(err)
	}
	r := rt.adaptation()
	durations := make([]time.Duration, 0, b.N)
	updates := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := ctr(p, fmt.Sprintf("n%d", i), 1000, 0, 256<<20)
		req := &api.CreateContainerRequest{Pod: p, Container: c}
		start := time.Now()
		resp, err := r.CreateContainer(ctx, req)
		durations = append(durations, time.Since(start))
		if err != nil || resp.GetAdjust().GetLinux().GetResources().GetCpu().GetCpus() == "" {
			b.Fatalf("create: %v (%v)", err, resp)
		}
		b.StopTimer()
		updates += len(resp.GetUpdate())
		if err := r.RemoveContainer(ctx, &api.RemoveContainerRequest{Pod: p, Container: c}); err != nil {
			b.Fatal(err)
		}
		rt.waitUnsolicited(1)
		rt.dropUnsolicited()
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(updates)/float64(b.N), "updates/op")
}
