package shadow_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/host/shadow"

	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// BenchmarkActivePath measures the active policy's CreateContainer and
// RemoveContainer (topology-aware, natively, on N4C16) alone and with a shadow
// running the same policy: the difference is what the shadow costs the
// runtime's wait (encoding the request, copying the answer, queueing it) plus
// the CPU the shadow's goroutine takes from the same machine.
//
//	go test -run '^$' -bench ActivePath -benchtime 2000x -count 3 ./host/shadow/
func BenchmarkActivePath(b *testing.B) {
	for _, shadowed := range []bool{false, true} {
		b.Run(fmt.Sprintf("shadow=%v", shadowed), func(b *testing.B) {
			var r *rig
			if shadowed {
				r = newRig(b, reserveOne, &nativePolicy{}, reserveOne)
			} else {
				r = newRig(b, reserveOne, nil, "")
			}
			ctx := context.Background()
			req := policytest.Container("c", 1000).Request()
			if _, err := r.m.RunPodSandbox(ctx, req.Pod); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, _, err := r.m.CreateContainer(ctx, req.Pod, req.Container); err != nil {
					b.Fatal(err)
				}
				if _, err := r.m.RemoveContainer(ctx, req.Pod, req.Container); err != nil {
					b.Fatal(err)
				}
			}
			if shadowed { // how far behind the shadow ended: the time it takes to catch up
				b.StopTimer()
				start := time.Now()
				rep := r.waitFor(b, "the shadow caught up", func(rep shadow.Report) bool {
					cc, rc := rep.Methods["CreateContainer"], rep.Methods["RemoveContainer"]
					return rep.Dropped > 0 || cc != nil && rc != nil && cc.Compared+rc.Compared == uint64(2*b.N)
				})
				b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "catchup-ms")
				b.ReportMetric(float64(rep.Dropped), "dropped")
			}
		})
	}
}
