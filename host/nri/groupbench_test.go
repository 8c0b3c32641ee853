package nri_test

import "testing"

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
	rt.runLive(b, 200)
	p := pod("bench", "burstable")
	if err := rt.runPod(p); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	updates := rt.timeCreates(b, p, 1000, func() {
		rt.waitUnsolicited(1)
		rt.dropUnsolicited()
	})
	b.ReportMetric(float64(updates)/float64(b.N), "updates/op")
}
