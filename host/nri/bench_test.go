package nri_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"

	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// server256 is a 256-CPU machine: 2 sockets, 2 NUMA nodes each, 32 cores per
// node, 2 threads per core.
func server256() topologytest.Machine {
	return topologytest.Machine{Sockets: 2, NodesPerDie: 2, CoresPerNode: 32, ThreadsPerCore: 2, MemPerNodeGiB: 128}
}

// liveContainers is how many containers run while CreateContainer is measured.
const liveContainers = 1000

// runLive runs n Burstable containers (100m, 256 MiB), ten to a pod, through
// the agent rt is connected to.
func (rt *fakeRuntime) runLive(tb testing.TB, n int) {
	tb.Helper()
	for i := range n / 10 {
		p := pod(fmt.Sprintf("live%03d", i), "burstable")
		if err := rt.runPod(p); err != nil {
			tb.Fatal(err)
		}
		for j := range 10 {
			if _, err := rt.create(p, ctr(p, fmt.Sprintf("c%d", j), 100, 0, 256<<20)); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// BenchmarkCreateContainer measures CreateContainer end to end: the runtime's
// request through NRI's adaptation and ttrpc to the agent, the topology-aware
// policy in Wasm, validation and the journal, and the adjustment back, with
// 1,000 live containers on a 256-CPU node. Each measured container is removed
// again (untimed), so the node stays at 1,000. It reports the median and the
// 99th percentile of single calls.
func BenchmarkCreateContainer(b *testing.B) {
	rt := newRuntime(b)
	rt.start()
	a := startAgent(b, rt, agentOpts{topo: machineTopology(b, "server256", server256())})
	rt.waitSync()
	rt.runLive(b, liveContainers)
	p := pod("bench", "burstable")
	if err := rt.runPod(p); err != nil {
		b.Fatal(err)
	}
	rt.timeCreates(b, p, 100, nil)
	b.ReportMetric(a.meanCall(b, "CreateContainer").Seconds()*1e6, "policy-µs")
}

// timeCreates creates b.N containers of milli CPU (256 MiB) in pod p through
// NRI's adaptation, timing each CreateContainer, and removes each again
// untimed, calling afterRemove, if set, before the next create. It reports the
// median and the 99th percentile of the creates (p50-µs, p99-µs) and returns
// how many updates they answered.
func (rt *fakeRuntime) timeCreates(b *testing.B, p *api.PodSandbox, milli int64, afterRemove func()) (updates int) {
	ctx := context.Background()
	r := rt.adaptation()
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := ctr(p, fmt.Sprintf("n%d", i), milli, 0, 256<<20)
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
		if afterRemove != nil {
			afterRemove()
		}
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
	return updates
}
