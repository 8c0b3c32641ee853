package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PoolStat is one pool of the policy as the nriwasm_pool_* gauges show it.
type PoolStat struct {
	Name                                string
	CPUs, SharedCPUs, MemoryNodes       int
	CapacityMilliCPU, AllocatedMilliCPU uint64
	Containers                          int
}

// PoolSource returns the policy's pools; the collector calls it on every
// scrape (the resource manager asks the policy only when a decision changed).
type PoolSource func(context.Context) ([]PoolStat, error)

// poolScrapeTimeout bounds one scrape's wait for the pools.
const poolScrapeTimeout = 2 * time.Second

// poolCollector exports the pools of the last answer as gauges labelled by
// pool name: at most 256 names of at most 128 bytes (the host refuses
// answers over those limits), and a pool that is gone disappears from the
// next scrape, so the label set stays bounded.
type poolCollector struct {
	mu     sync.Mutex
	source PoolSource
	descs  []poolDesc
}

type poolDesc struct {
	desc  *prometheus.Desc
	value func(PoolStat) float64
}

func newPoolCollector() *poolCollector {
	d := func(name, help string, value func(PoolStat) float64) poolDesc {
		return poolDesc{prometheus.NewDesc(name, help, []string{"pool"}, nil), value}
	}
	return &poolCollector{descs: []poolDesc{
		d("nriwasm_pool_cpus", "CPUs the policy's pool holds.", func(p PoolStat) float64 { return float64(p.CPUs) }),
		d("nriwasm_pool_shared_cpus", "CPUs of the pool its containers share.", func(p PoolStat) float64 { return float64(p.SharedCPUs) }),
		d("nriwasm_pool_memory_nodes", "Memory nodes the pool's containers get.", func(p PoolStat) float64 { return float64(p.MemoryNodes) }),
		d("nriwasm_pool_capacity_milli_cpu", "What the pool can give, in milli-CPU.", func(p PoolStat) float64 { return float64(p.CapacityMilliCPU) }),
		d("nriwasm_pool_allocated_milli_cpu", "What the pool's containers were given, in milli-CPU.", func(p PoolStat) float64 { return float64(p.AllocatedMilliCPU) }),
		d("nriwasm_pool_containers", "Containers placed in the pool.", func(p PoolStat) float64 { return float64(p.Containers) }),
	}}
}

// Describe implements prometheus.Collector.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d.desc
	}
}

// Collect implements prometheus.Collector: nothing while no source is set or
// the policy's answer failed (the failure is counted in
// nriwasm_policy_call_errors_total{method="Pools"}).
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	source := c.source
	c.mu.Unlock()
	if source == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), poolScrapeTimeout)
	defer cancel()
	pools, err := source(ctx)
	if err != nil {
		return
	}
	for _, p := range pools {
		for _, d := range c.descs {
			ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, d.value(p), p.Name)
		}
	}
}

// SetPoolSource sets where the nriwasm_pool_* gauges come from; until it is
// set they are absent (a policy without the Pools call).
func (m *Metrics) SetPoolSource(s PoolSource) {
	if m == nil {
		return
	}
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	m.pools.source = s
}
