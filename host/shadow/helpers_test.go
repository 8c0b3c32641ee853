package shadow_test

import (
	"context"
	"sync"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/shadow"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// nativePolicy runs topology-aware natively and behaves like wasm.Policy
// around failures: a call for which trap answers true fails with ErrTrap and
// discards the instance; the next call rebuilds it through the restore hook.
// With gate set, every CreateContainer first sends on arrived, then waits
// until gate is closed.
type nativePolicy struct {
	mu       sync.Mutex
	restore  wasm.RestoreFunc
	inst     *native.Runner
	trap     func(abi.Method) bool
	gate     chan struct{}
	arrived  chan struct{}
	inits    []*abi.InitRequest
	rebuilds uint64
	// compiling, when set, is what Compiling returns, as a wasm.Policy
	// started on the interpreter; Promote then rebuilds the instance
	// through the restore hook and counts promotions.
	compiling  chan error
	promotions int
}

func (p *nativePolicy) Compiling() <-chan error { return p.compiling }

func (p *nativePolicy) Promote(ctx context.Context) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.build(ctx); err != nil {
		return false, err
	}
	p.promotions++
	return true, nil
}

func (p *nativePolicy) promoted() int { p.mu.Lock(); defer p.mu.Unlock(); return p.promotions }

func (p *nativePolicy) load(ctx context.Context, restore wasm.RestoreFunc) (resmgr.Policy, error) {
	p.restore = restore
	if err := p.build(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *nativePolicy) build(ctx context.Context) error {
	r, err := native.New(topologyaware.New())
	if err != nil {
		return err
	}
	if err := p.restore(ctx, initRecorder{p, r}); err != nil {
		return &wasm.CallError{Policy: "native", Method: abi.Method_METHOD_INIT, Kind: wasm.ErrRestore, Err: err}
	}
	p.inst = r
	return nil
}

func (p *nativePolicy) Call(ctx context.Context, m abi.Method, req abi.Message) (*abi.Response, error) {
	if p.gate != nil && m == abi.Method_METHOD_CREATE_CONTAINER {
		select {
		case p.arrived <- struct{}{}:
		case <-p.gate:
		}
		<-p.gate
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inst == nil {
		if err := p.build(ctx); err != nil {
			return nil, err
		}
		p.rebuilds++
	}
	if p.trap != nil && p.trap(m) {
		p.inst = nil
		return nil, &wasm.CallError{Policy: "native", Method: m, Kind: wasm.ErrTrap}
	}
	return p.inst.Call(ctx, m, req)
}

func (p *nativePolicy) Rebuilds() uint64 { p.mu.Lock(); defer p.mu.Unlock(); return p.rebuilds }

func (p *nativePolicy) Close(context.Context) error { return nil }

func (p *nativePolicy) Discard(context.Context) { p.mu.Lock(); defer p.mu.Unlock(); p.inst = nil }

func (p *nativePolicy) lastInit() *abi.InitRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inits[len(p.inits)-1]
}

type initRecorder struct {
	p *nativePolicy
	r *native.Runner
}

func (r initRecorder) Call(ctx context.Context, m abi.Method, req abi.Message) (*abi.Response, error) {
	if init, ok := req.(*abi.InitRequest); ok {
		r.p.inits = append(r.p.inits, init.CloneVT())
	}
	return r.r.Call(ctx, m, req)
}

// rig is an active topology-aware policy under a resource manager, with a
// shadow beside it.
type rig struct {
	m      *resmgr.Manager
	shadow *shadow.Shadow
	met    *metrics.Metrics
	topo   *abi.Topology
}

// Two configurations of topology-aware that place a Burstable container on
// other shared CPUs: one or two CPUs reserved for kube-system.
const (
	reserveOne = `{"reservedResources":{"cpu":"1"}}`
	reserveTwo = `{"reservedResources":{"cpu":"2"}}`
)

// newRig starts the manager with active's configuration and, if sp is not
// nil, a shadow running sp with shadowConfig and the further options extra.
// The shadow is not added when sp is nil.
func newRig(tb testing.TB, activeConfig string, sp *nativePolicy, shadowConfig string, extra ...shadow.Option) *rig {
	tb.Helper()
	topo := policytest.Machine(tb, "N4C16")
	cfg := config.Default()
	cfg.Policy.Name = "topology-aware"
	cfg.Policy.Data = []byte(activeConfig)
	cfg.StateDir = tb.TempDir()
	met := metrics.New()
	m, err := resmgr.New(context.Background(), cfg, topo, (&nativePolicy{}).load, resmgr.WithNodeName("node-1"), resmgr.WithMetrics(met))
	if err != nil {
		tb.Fatal(err)
	}
	r := &rig{m: m, met: met, topo: topo}
	if sp != nil {
		opts := append([]shadow.Option{shadow.WithConfig([]byte(shadowConfig)), shadow.WithNodeName("node-1"), shadow.WithMetrics(met)}, extra...)
		limits, err := validate.New(topo)
		if err != nil {
			tb.Fatal(err)
		}
		if r.shadow, err = shadow.New("topology-aware-next", sp.load, topo, limits, m.Snapshot, opts...); err != nil {
			tb.Fatal(err)
		}
		m.AddObserver(r.shadow)
		m.Go("shadow", r.shadow.Run)
	}
	if err := m.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Stop() })
	if r.shadow != nil { // what happens before its snapshot is not compared
		r.waitFor(tb, "the shadow running", func(rep shadow.Report) bool { return rep.State != shadow.StateLoading })
	}
	if _, err := m.Synchronize(context.Background(), nil, nil); err != nil {
		tb.Fatal(err)
	}
	return r
}

// create asks the manager to create a Burstable container of milli CPU in a
// pod of its own and returns the cpuset it was given.
func (r *rig) create(tb testing.TB, id string, milli int64) string {
	tb.Helper()
	req := policytest.Container(id, milli).Request()
	if _, err := r.m.RunPodSandbox(context.Background(), req.Pod); err != nil {
		tb.Fatal(err)
	}
	adj, _, err := r.m.CreateContainer(context.Background(), req.Pod, req.Container)
	if err != nil {
		tb.Fatal(err)
	}
	return adj.GetCpusetCpus()
}

// waitFor polls the shadow's report until ok accepts it (the shadow works on
// its own goroutine) or a minute passes.
func (r *rig) waitFor(tb testing.TB, what string, ok func(shadow.Report) bool) shadow.Report {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		rep := r.shadow.Report()
		if ok(rep) {
			return rep
		}
		if time.Now().After(deadline) {
			tb.Fatalf("shadow report never showed %s: %+v", what, rep)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
