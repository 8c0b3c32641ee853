package resmgr

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/metrics"
)

// ErrNoPools means the policy does not answer the Pools call: it does not list
// METHOD_POOLS in its capabilities (a policy built for ABI v1.0 or v1.1, or
// one without pools).
var ErrNoPools = errors.New("the policy does not report pools (no Pools capability)")

// Pool is one of the policy's pools of CPUs, as its Pools call answered it and
// the host checked it (host/validate): CPU and memory node lists parsed and
// sorted.
type Pool struct {
	// Name is unique among the pools, at most abi.MaxPoolName bytes.
	Name string
	// CPUs are every CPU the pool holds; SharedCPUs those its containers
	// share (a balloon's may be borrowed from outside CPUs).
	CPUs, SharedCPUs []uint32
	// MemoryNodes are the NUMA nodes the pool's containers get memory from.
	MemoryNodes []uint32
	// CapacityMilliCPU is what the pool can give, AllocatedMilliCPU what its
	// containers were given, in milli-CPU.
	CapacityMilliCPU, AllocatedMilliCPU uint64
	// Containers are the ids of the containers placed in the pool.
	Containers []string
}

// poolCache holds the policy's last checked Pools answer. It is refreshed
// lazily: any call that may have changed a decision marks it stale, and the
// next Pools asks the policy again. Guarded by the manager's lock.
type poolCache struct {
	supported bool // the policy lists METHOD_POOLS
	stale     bool
	// down is set while the last call's failure left no instance: the next
	// decision rebuilds it, a scrape must not (the rebuild would be counted,
	// and paid, for a metric).
	down  bool
	pools []Pool
}

// Pools returns the policy's pools, asking the policy only if a decision was
// made since the last answer and an instance is up (after a failure it
// returns the last answer until a decision rebuilds the instance). It returns ErrNoPools for a policy without the
// Pools call, and the policy's or the checks' error if its answer failed (the
// call is then counted like any other, with method "Pools").
func (m *Manager) Pools(ctx context.Context) ([]Pool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.pools.supported {
		return nil, ErrNoPools
	}
	if m.pools.stale && !m.pools.down {
		var resp *abi.PoolsResponse
		err := m.call(ctx, abi.Method_METHOD_POOLS, func(ctx context.Context) (err error) {
			if resp, err = m.client.Pools(ctx, &abi.PoolsRequest{}); err != nil {
				return err
			}
			return m.limits.Pools(resp)
		})
		if err != nil {
			return nil, fmt.Errorf("pools: %w", err)
		}
		m.pools.pools = toPools(resp)
		m.pools.stale = false
	}
	return slices.Clone(m.pools.pools), nil
}

// toPools converts a checked answer; its lists parse (host/validate).
func toPools(r *abi.PoolsResponse) []Pool {
	pools := make([]Pool, 0, len(r.GetPools()))
	for _, p := range r.GetPools() {
		pools = append(pools, Pool{
			Name: p.GetName(), CPUs: list(p.GetCpus()), SharedCPUs: list(p.GetSharedCpus()),
			MemoryNodes: list(p.GetMemoryNodes()), CapacityMilliCPU: p.GetCapacityMilliCpu(),
			AllocatedMilliCPU: p.GetAllocatedMilliCpu(), Containers: slices.Clone(p.GetContainerIds()),
		})
	}
	return pools
}

func list(s string) []uint32 {
	ids, _ := cpuset.ParseList(s)
	slices.Sort(ids)
	return ids
}

// discoverPools asks the policy's Info whether it answers Pools and, if so,
// hands the metrics a source for the nriwasm_pool_* gauges. Called from New.
func (m *Manager) discoverPools(ctx context.Context) error {
	info, err := m.client.Info(ctx, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor})
	if err != nil {
		return fmt.Errorf("info: %w", err)
	}
	m.pools = poolCache{supported: info.GetMetadata().HasCapability(abi.Method_METHOD_POOLS), stale: true}
	if m.pools.supported {
		m.metrics.SetPoolSource(m.poolStats)
	}
	return nil
}

// poolStats is the metrics' view of Pools.
func (m *Manager) poolStats(ctx context.Context) ([]metrics.PoolStat, error) {
	pools, err := m.Pools(ctx)
	if err != nil {
		return nil, err
	}
	stats := make([]metrics.PoolStat, len(pools))
	for i, p := range pools {
		stats[i] = metrics.PoolStat{
			Name: p.Name, CPUs: len(p.CPUs), SharedCPUs: len(p.SharedCPUs), MemoryNodes: len(p.MemoryNodes),
			CapacityMilliCPU: p.CapacityMilliCPU, AllocatedMilliCPU: p.AllocatedMilliCPU, Containers: len(p.Containers),
		}
	}
	return stats, nil
}
