package resmgr_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

func newMeteredManager(t *testing.T, f *fakePolicy) (*resmgr.Manager, *metrics.Metrics) {
	t.Helper()
	cfg := config.Default()
	cfg.Policy.Name = "conformance"
	cfg.StateDir = t.TempDir()
	met := metrics.New()
	m, err := resmgr.New(context.Background(), cfg, testTopology(), f.load, resmgr.WithNodeName("node-1"), resmgr.WithMetrics(met))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	return m, met
}

// TestPools: the pools come from the policy's Pools call, which is asked
// again only after a decision, and show as per-pool gauges on a scrape.
func TestPools(t *testing.T) {
	ctx := context.Background()
	f := newFake(nil)
	m, met := newMeteredManager(t, f)
	for _, id := range []string{"a", "b"} {
		pod, c := container(id, "0-1")
		if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
			t.Fatal(err)
		}
	}
	want := []resmgr.Pool{{
		Name: "all", CPUs: []uint32{0, 1, 2, 3}, SharedCPUs: []uint32{2, 3}, MemoryNodes: []uint32{0},
		CapacityMilliCPU: 4000, AllocatedMilliCPU: 200, Containers: []string{"a"},
	}}
	for range 3 {
		pools, err := m.Pools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(pools, want, equalPool) {
			t.Fatalf("Pools = %+v, want %+v", pools, want)
		}
	}
	if n := f.calls[abi.Method_METHOD_POOLS]; n != 1 {
		t.Fatalf("the policy was asked %d times without a decision in between, want 1", n)
	}

	pod, c := container("c", "0-1")
	if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
		t.Fatal(err)
	}
	const scraped = `
# HELP nriwasm_pool_allocated_milli_cpu What the pool's containers were given, in milli-CPU.
# TYPE nriwasm_pool_allocated_milli_cpu gauge
nriwasm_pool_allocated_milli_cpu{pool="all"} 300
# HELP nriwasm_pool_cpus CPUs the policy's pool holds.
# TYPE nriwasm_pool_cpus gauge
nriwasm_pool_cpus{pool="all"} 4
# HELP nriwasm_pool_shared_cpus CPUs of the pool its containers share.
# TYPE nriwasm_pool_shared_cpus gauge
nriwasm_pool_shared_cpus{pool="all"} 2
`
	if err := testutil.GatherAndCompare(met.Registry, strings.NewReader(scraped),
		"nriwasm_pool_allocated_milli_cpu", "nriwasm_pool_cpus", "nriwasm_pool_shared_cpus"); err != nil {
		t.Fatal(err)
	}
	if n := f.calls[abi.Method_METHOD_POOLS]; n != 2 {
		t.Fatalf("the policy was asked %d times, want 2 (once more after the decision)", n)
	}
}

func equalPool(a, b resmgr.Pool) bool {
	return a.Name == b.Name && slices.Equal(a.CPUs, b.CPUs) && slices.Equal(a.SharedCPUs, b.SharedCPUs) &&
		slices.Equal(a.MemoryNodes, b.MemoryNodes) && a.CapacityMilliCPU == b.CapacityMilliCPU &&
		a.AllocatedMilliCPU == b.AllocatedMilliCPU && slices.Equal(a.Containers, b.Containers)
}

// withoutPools is the conformance policy without the Pools call: a policy
// built before ABI v1.2.
type withoutPools struct{ policy.Initializer }

func (withoutPools) Describe() policy.Description { return (&conformance.Policy{}).Describe() }

// TestPoolsNotAsked: a policy that does not list Pools is never asked and
// exports no pool gauges.
func TestPoolsNotAsked(t *testing.T) {
	f := newFake(nil)
	f.newPol = func() policy.Policy { return withoutPools{&conformance.Policy{}} }
	m, met := newMeteredManager(t, f)
	if _, err := m.Pools(context.Background()); !errors.Is(err, resmgr.ErrNoPools) {
		t.Fatalf("Pools = %v, want ErrNoPools", err)
	}
	if n, err := testutil.GatherAndCount(met.Registry, "nriwasm_pool_cpus"); err != nil || n != 0 {
		t.Fatalf("nriwasm_pool_cpus has %d series (%v), want none", n, err)
	}
	if n := f.calls[abi.Method_METHOD_POOLS]; n != 0 {
		t.Fatalf("the policy was asked for pools %d times", n)
	}
}

// badPools answers a pool with a CPU the node does not have.
type badPools struct{ *conformance.Policy }

func (badPools) Pools(*abi.PoolsRequest) (*abi.PoolsResponse, error) {
	return &abi.PoolsResponse{Pools: []*abi.Pool{{Name: "x", Cpus: "0-99"}}}, nil
}

// TestPoolsChecked: an answer outside the node's limits is refused naming
// the field, and the scrape shows no pools rather than wrong ones.
func TestPoolsChecked(t *testing.T) {
	f := newFake(nil)
	f.newPol = func() policy.Policy { return badPools{&conformance.Policy{}} }
	m, met := newMeteredManager(t, f)
	_, err := m.Pools(context.Background())
	var ve *validate.Error
	if !errors.As(err, &ve) || ve.Field != "pools[0].cpus" {
		t.Fatalf("Pools = %v, want a refusal naming pools[0].cpus", err)
	}
	if n, err := testutil.GatherAndCount(met.Registry, "nriwasm_pool_cpus"); err != nil || n != 0 {
		t.Fatalf("nriwasm_pool_cpus has %d series (%v), want none", n, err)
	}
}

// TestPoolsScrapedDuringDecisions hammers the pool gauges from scrapes while
// containers are created and removed: run with -race, nothing races, and
// every scrape shows the one pool.
func TestPoolsScrapedDuringDecisions(t *testing.T) {
	ctx := context.Background()
	m, met := newMeteredManager(t, newFake(nil))
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for {
			select {
			case <-done:
				return
			default:
			}
			if n, err := testutil.GatherAndCount(met.Registry, "nriwasm_pool_cpus"); err != nil || n != 1 {
				errs <- fmt.Errorf("a scrape found %d pool series (%v), want 1", n, err)
				return
			}
		}
	}()
	for i := range 50 {
		pod, c := container(fmt.Sprintf("c%d", i), "0-1")
		if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
			t.Fatal(err)
		}
		if _, err := m.RemoveContainer(ctx, pod, c); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// TestPoolsAfterAFailure: a scrape between a failed call and the next
// decision is served the last answer and does not rebuild the instance; the
// next decision rebuilds it, and the scrape after that asks the policy again.
func TestPoolsAfterAFailure(t *testing.T) {
	ctx := context.Background()
	f := newFake(map[abi.Method]int{abi.Method_METHOD_CREATE_CONTAINER: 2}) // the call and its retry
	m, _ := newMeteredManager(t, f)
	before, err := m.Pools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pod, c := container("a", "0-1")
	_, _, _ = m.CreateContainer(ctx, pod, c) // fails open or closed: either leaves no instance
	if n := f.calls[abi.Method_METHOD_CREATE_CONTAINER]; n != 2 {
		t.Fatalf("CreateContainer reached the policy %d times, want 2 (the call and its retry, both trapping)", n)
	}
	rebuilds := f.Rebuilds()
	pools, err := m.Pools(ctx)
	if err != nil || !slices.EqualFunc(pools, before, equalPool) {
		t.Fatalf("Pools after the failure = %+v, %v; want the last answer %+v", pools, err, before)
	}
	if n := f.Rebuilds(); n != rebuilds {
		t.Fatalf("a scrape rebuilt the instance (%d rebuilds, was %d)", n, rebuilds)
	}
	pod, c = container("b", "0-1")
	if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
		t.Fatal(err)
	}
	asked := f.calls[abi.Method_METHOD_POOLS]
	if _, err := m.Pools(ctx); err != nil {
		t.Fatal(err)
	}
	if f.calls[abi.Method_METHOD_POOLS] != asked+1 {
		t.Fatal("the scrape after a decision on the rebuilt instance did not ask the policy")
	}
}
