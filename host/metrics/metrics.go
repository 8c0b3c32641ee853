// Package metrics holds the agent's Prometheus metrics and serves them, with
// the health and readiness probes, over HTTP.
//
// Every metric is named nriwasm_*:
//
//	nriwasm_policy_call_duration_seconds{method}        histogram of ABI calls
//	nriwasm_policy_call_errors_total{method,kind}       failed calls by kind
//	nriwasm_policy_instance_rebuilds_total              instances rebuilt after a failure
//	nriwasm_policy_answers_refused_total{method,field}  answers refused by the shape checks
//	nriwasm_fail_open_total                             containers started unpinned (fail-open)
//	nriwasm_managed_pods / _containers / _claims        what the journal holds
//	nriwasm_config_reloads_total{result}                applied, rejected, restart_required, invalid
//	nriwasm_policy_swaps_total{result}                  live policy swaps: accepted, refused, failed, restart_required
//	nriwasm_nri_connections_total{result}               connected, failed, lost
//	nriwasm_checkpoint_save_failing                     1 while the checkpoint cannot be written
//	nriwasm_policy_log_messages_dropped_total           policy log messages and output lines over the limits
//	nriwasm_policy_degraded                             1 while the policy runs without the journal's full state
//	nriwasm_policy_interpreted                          1 while the policy runs on the interpreter, its code compiling
//	nriwasm_policy_compile_failures_total               background compiles of the policy that failed (retried)
//	nriwasm_pool_cpus / _shared_cpus / _memory_nodes {pool}  the policy's pools (ABI v1.2 Pools call)
//	nriwasm_pool_capacity_milli_cpu / _allocated_milli_cpu / _containers {pool}
//	nriwasm_shadow_compared_total / _divergences_total {method}  the shadow policy (host/shadow)
//	nriwasm_shadow_resyncs_total{reason}, _failures_total{kind}, _lag_seconds, _running
//
// A nil *Metrics is valid and records nothing, so components work without one.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Results of a configuration reload (nriwasm_config_reloads_total's label).
const (
	ReloadApplied         = "applied"
	ReloadRejected        = "rejected"
	ReloadRestartRequired = "restart_required"
	ReloadInvalid         = "invalid"
)

// Results of a live policy swap (nriwasm_policy_swaps_total's label).
const (
	// SwapAccepted: the new policy serves.
	SwapAccepted = "accepted"
	// SwapRefused: the new policy's restore would move more containers than
	// policy.swap.maxMoves; the old one serves on.
	SwapRefused = "refused"
	// SwapFailed: the new policy did not resolve, load, or restore from the
	// journal; the old one serves on.
	SwapFailed = "failed"
	// SwapRestartRequired: the new policy turns DRA on or off, or renames the
	// DRA driver; the old one serves on until a restart.
	SwapRestartRequired = "restart_required"
)

// Results of an NRI connection attempt (nriwasm_nri_connections_total's label).
const (
	ConnConnected = "connected"
	ConnFailed    = "failed"
	ConnLost      = "lost"
)

// Metrics are the agent's metrics, registered in their own Registry.
type Metrics struct {
	Registry *prometheus.Registry

	callDuration  *prometheus.HistogramVec
	callErrors    *prometheus.CounterVec
	rebuilds      prometheus.Counter
	refused       *prometheus.CounterVec
	failOpen      prometheus.Counter
	pods          prometheus.Gauge
	containers    prometheus.Gauge
	claims        prometheus.Gauge
	configReloads *prometheus.CounterVec
	swaps         *prometheus.CounterVec
	connections   *prometheus.CounterVec
	connected     prometheus.Gauge
	saveFailing   prometheus.Gauge
	logsDropped   prometheus.Counter
	pools         *poolCollector
	degraded      prometheus.Gauge
	interpreted   prometheus.Gauge
	compileFailed prometheus.Counter
	shadow        *shadowMetrics
}

// callBuckets span 10 µs to about 2.6 s: an ABI call takes tens of
// microseconds, a rebuild with Init milliseconds, a deadline a second.
var callBuckets = prometheus.ExponentialBuckets(10e-6, 4, 10)

// New returns the metrics, registered with the Go runtime and process
// collectors in a new Registry.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "nriwasm_policy_call_duration_seconds", Help: "Duration of ABI calls into the policy, retries and rebuilds included.",
			Buckets: callBuckets,
		}, []string{"method"}),
		callErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nriwasm_policy_call_errors_total", Help: "Failed ABI calls by method and kind (trap, deadline, out_of_memory, exit, malformed, restore, policy, other).",
		}, []string{"method", "kind"}),
		rebuilds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nriwasm_policy_instance_rebuilds_total", Help: "Policy instances discarded after a failure and rebuilt from the journal.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nriwasm_policy_answers_refused_total", Help: "Policy answers refused by the host's shape checks, by method and offending field.",
		}, []string{"method", "field"}),
		failOpen: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nriwasm_fail_open_total", Help: "Containers started without the policy's adjustment after a policy failure (nri.onPolicyFailure: fail-open).",
		}),
		pods:       prometheus.NewGauge(prometheus.GaugeOpts{Name: "nriwasm_managed_pods", Help: "Pods in the journal."}),
		containers: prometheus.NewGauge(prometheus.GaugeOpts{Name: "nriwasm_managed_containers", Help: "Containers in the journal."}),
		claims:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "nriwasm_managed_claims", Help: "Prepared DRA claims in the journal."}),
		configReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nriwasm_config_reloads_total", Help: "Configuration changes seen, by result (applied, rejected, restart_required, invalid).",
		}, []string{"result"}),
		swaps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nriwasm_policy_swaps_total", Help: "Live policy swaps tried, by result (accepted, refused, failed, restart_required).",
		}, []string{"result"}),
		connections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nriwasm_nri_connections_total", Help: "NRI connection events (connected, failed, lost).",
		}, []string{"result"}),
		connected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "nriwasm_nri_connected", Help: "1 while the agent is registered with the runtime over NRI, 0 while it is not (new containers then start without the policy).",
		}),
		logsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nriwasm_policy_log_messages_dropped_total", Help: "Log messages and output lines of the policy dropped over the limits (100 a call, 64 KiB/s; docs/security.md).",
		}),
		saveFailing: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "nriwasm_checkpoint_save_failing", Help: "1 while the last attempt to write the checkpoint failed (a read-only or full state directory): a restart would lose what changed since.",
		}),
	}
	m.pools = newPoolCollector()
	m.degraded = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "nriwasm_policy_degraded", Help: "1 while the policy runs without the journal's full state: restoring it failed, and the instance was started adopting the live containers or fresh (docs/agent.md).",
	})
	m.interpreted = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "nriwasm_policy_interpreted", Help: "1 while the policy runs on wazero's interpreter because its compiled code is not ready yet (compiling in a child process; docs/agent.md), 0 on compiled code.",
	})
	m.compileFailed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "nriwasm_policy_compile_failures_total", Help: "Background compiles of the policy that failed; each is logged with its reason and tried again, the policy serving on the interpreter meanwhile.",
	})
	m.shadow = newShadowMetrics()
	m.Registry.MustRegister(m.shadow.collectors()...)
	m.Registry.MustRegister(
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.callDuration, m.callErrors, m.rebuilds, m.refused, m.failOpen,
		m.pods, m.containers, m.claims, m.configReloads, m.swaps, m.connections, m.connected, m.saveFailing, m.logsDropped, m.pools, m.degraded,
		m.interpreted, m.compileFailed,
	)
	return m
}

// ObserveCall records one ABI call's duration and, if errKind is not "", its
// failure.
func (m *Metrics) ObserveCall(method string, d time.Duration, errKind string) {
	if m == nil {
		return
	}
	m.callDuration.WithLabelValues(method).Observe(d.Seconds())
	if errKind != "" {
		m.callErrors.WithLabelValues(method, errKind).Inc()
	}
}

// Rebuilt counts n instance rebuilds.
func (m *Metrics) Rebuilt(n uint64) {
	if m != nil && n > 0 {
		m.rebuilds.Add(float64(n))
	}
}

// LogsDropped counts n policy log messages dropped over the limits.
func (m *Metrics) LogsDropped(n uint64) {
	if m != nil && n > 0 {
		m.logsDropped.Add(float64(n))
	}
}

// Refused counts an answer refused by the shape checks.
func (m *Metrics) Refused(method, field string) {
	if m != nil {
		m.refused.WithLabelValues(method, field).Inc()
	}
}

// FailedOpen counts a container started unpinned.
func (m *Metrics) FailedOpen() {
	if m != nil {
		m.failOpen.Inc()
	}
}

// Managed sets how many pods, containers and claims the journal holds.
func (m *Metrics) Managed(pods, containers, claims int) {
	if m != nil {
		m.pods.Set(float64(pods))
		m.containers.Set(float64(containers))
		m.claims.Set(float64(claims))
	}
}

// ConfigReload counts a configuration change with one of the Reload* results.
func (m *Metrics) ConfigReload(result string) {
	if m != nil {
		m.configReloads.WithLabelValues(result).Inc()
	}
}

// Swap counts a live policy swap with one of the Swap* results.
func (m *Metrics) Swap(result string) {
	if m != nil {
		m.swaps.WithLabelValues(result).Inc()
	}
}

// Connection counts an NRI connection event, one of the Conn* results, and
// sets nriwasm_nri_connected: 1 after ConnConnected, 0 after ConnLost.
func (m *Metrics) Connection(result string) {
	if m == nil {
		return
	}
	m.connections.WithLabelValues(result).Inc()
	switch result {
	case ConnConnected:
		m.connected.Set(1)
	case ConnLost:
		m.connected.Set(0)
	}
}

// CheckpointSaved sets nriwasm_checkpoint_save_failing from the outcome of a
// checkpoint write.
func (m *Metrics) CheckpointSaved(ok bool) {
	if m == nil {
		return
	}
	if ok {
		m.saveFailing.Set(0)
	} else {
		m.saveFailing.Set(1)
	}
}

// Degraded sets nriwasm_policy_degraded.
func (m *Metrics) Degraded(on bool) {
	if m == nil {
		return
	}
	if on {
		m.degraded.Set(1)
	} else {
		m.degraded.Set(0)
	}
}

// Interpreted sets nriwasm_policy_interpreted.
func (m *Metrics) Interpreted(on bool) {
	if m == nil {
		return
	}
	if on {
		m.interpreted.Set(1)
	} else {
		m.interpreted.Set(0)
	}
}

// CompileFailed counts a failed background compile.
func (m *Metrics) CompileFailed() {
	if m == nil {
		return
	}
	m.compileFailed.Inc()
}
