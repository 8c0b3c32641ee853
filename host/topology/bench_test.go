package topology_test

import (
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// BenchmarkDiscover times Discover on the 4,096-CPU fixture (the tree is
// written once, outside the timer).
func BenchmarkDiscover(b *testing.B) {
	start := time.Now()
	root := write(b, topologytest.Sparse4096CPU8Socket())
	b.Logf("fixture written in %v", time.Since(start))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := topology.Discover(root); err != nil {
			b.Fatal(err)
		}
	}
}
