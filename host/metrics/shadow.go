package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// shadowMetrics are the shadow policy's (host/shadow): what it compared, how
// it diverged, how far behind the active policy it ran.
type shadowMetrics struct {
	compared    *prometheus.CounterVec
	divergences *prometheus.CounterVec
	resyncs     *prometheus.CounterVec
	failures    *prometheus.CounterVec
	lag         prometheus.Histogram
	running     prometheus.Gauge
}

// Reasons a shadow is resynchronized (nriwasm_shadow_resyncs_total's label).
const (
	ResyncQueueFull = "queue_full"
	ResyncFailure   = "failure"
)

// lagBuckets span 100 µs to about 26 s.
var lagBuckets = prometheus.ExponentialBuckets(100e-6, 4, 9)

func newShadowMetrics() *shadowMetrics {
	return &shadowMetrics{
		compared: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nriwasm_shadow_compared_total", Help: "Requests the shadow policy answered and the host compared with the active policy's answer, by method.",
		}, []string{"method"}),
		divergences: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nriwasm_shadow_divergences_total", Help: "Requests the shadow policy answered differently from the active one (another cpuset or memory nodes, other updates or devices, an error on one side only), by method.",
		}, []string{"method"}),
		resyncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nriwasm_shadow_resyncs_total", Help: "Shadow instances rebuilt from the active journal, by reason (queue_full: requests were dropped; failure: the shadow trapped, timed out or ran out of memory).",
		}, []string{"reason"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nriwasm_shadow_failures_total", Help: "Shadow policy calls that failed at runtime, by kind (trap, deadline, out_of_memory, exit, malformed, restore, other).",
		}, []string{"kind"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "nriwasm_shadow_lag_seconds", Help: "Time from the active policy's answer to the shadow's answer to the same request.",
			Buckets: lagBuckets,
		}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "nriwasm_shadow_running", Help: "1 while a shadow policy runs, 0 once it was dropped (or while none is configured).",
		}),
	}
}

func (s *shadowMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.compared, s.divergences, s.resyncs, s.failures, s.lag, s.running}
}

// ShadowCompared counts a compared request and records the shadow's lag;
// diverged says whether the answers differed.
func (m *Metrics) ShadowCompared(method string, lag time.Duration, diverged bool) {
	if m == nil {
		return
	}
	m.shadow.compared.WithLabelValues(method).Inc()
	m.shadow.lag.Observe(lag.Seconds())
	if diverged {
		m.shadow.divergences.WithLabelValues(method).Inc()
	}
}

// ShadowResynced counts a resynchronization, with one of the Resync* reasons.
func (m *Metrics) ShadowResynced(reason string) {
	if m != nil {
		m.shadow.resyncs.WithLabelValues(reason).Inc()
	}
}

// ShadowFailed counts a failed shadow call of a kind (trap, deadline, ...).
func (m *Metrics) ShadowFailed(kind string) {
	if m != nil {
		m.shadow.failures.WithLabelValues(kind).Inc()
	}
}

// ShadowRunning sets nriwasm_shadow_running.
func (m *Metrics) ShadowRunning(on bool) {
	if m == nil {
		return
	}
	if on {
		m.shadow.running.Set(1)
	} else {
		m.shadow.running.Set(0)
	}
}
