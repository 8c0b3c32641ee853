package policytest

import (
	"slices"
	"testing"
	"time"
)

// Latencies collects one duration per operation of a benchmark, for
// percentiles: the mean testing.B reports hides the slow tail a node's
// kubelet waits on.
type Latencies []time.Duration

// Time runs f and records how long it took.
func (l *Latencies) Time(f func()) {
	start := time.Now()
	f()
	*l = append(*l, time.Since(start))
}

// Percentile is the q-th quantile (0 ≤ q ≤ 1) of the recorded durations,
// the nearest rank below; 0 when none was recorded. It sorts l.
func (l Latencies) Percentile(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	slices.Sort(l)
	return l[int(q*float64(len(l)-1))]
}

// Report reports p50 and p99 as the metrics "<prefix>p50-ns" and
// "<prefix>p99-ns".
func (l Latencies) Report(b *testing.B, prefix string) {
	b.ReportMetric(float64(l.Percentile(0.5).Nanoseconds()), prefix+"p50-ns")
	b.ReportMetric(float64(l.Percentile(0.99).Nanoseconds()), prefix+"p99-ns")
}
