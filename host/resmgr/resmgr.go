// Package resmgr is the agent's owner: it holds the policy, the journal and its
// checkpoint, the topology and the configuration, and serializes every request
// (NRI's and kubelet's DRA calls) on one lock.
//
// Each request runs under the lock: the policy is called (with a deadline well
// under the caller's, and retried once on a rebuilt instance after a runtime
// failure), its answer is checked by host/validate and refused whole if any
// field is out of bounds, and what is applied is recorded in the journal. The
// journal is checkpointed after every change by a background saver that
// encodes under the lock and writes outside it, coalescing bursts of changes.
//
// A new policy instance (the first, and any rebuilt after a trap, deadline or
// out-of-memory) is initialized with the configuration, the node name, the
// topology and the journal, so running containers keep their assignments.
//
//	m, err := resmgr.New(ctx, cfg, topo, load, resmgr.WithNodeName(node))
//	m.Go("nri", plugin.Run)
//	err = m.Run(ctx) // until ctx ends, Shutdown is called, or a component fails
package resmgr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/state"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// Policy is a loaded policy module; *wasm.Policy implements it.
type Policy interface {
	abi.Transport
	// Rebuilds counts instances rebuilt after a failure.
	Rebuilds() uint64
	// Discard drops the current instance; the next call rebuilds it.
	Discard(ctx context.Context)
	Close(ctx context.Context) error
}

// logDropper is implemented by a Policy that drops log messages over its
// limits (*wasm.Policy): DroppedLogs counts them since it was loaded.
type logDropper interface {
	DroppedLogs() uint64
}

// droppedLogs is p's count of dropped log messages, 0 if it drops none.
func droppedLogs(p Policy) uint64 {
	if d, ok := p.(logDropper); ok {
		return d.DroppedLogs()
	}
	return 0
}

// LoadFunc loads the policy and prepares its first instance with restore (which
// it must also run on every instance it rebuilds), as wasm.Load with
// wasm.WithRestore does.
type LoadFunc func(ctx context.Context, restore wasm.RestoreFunc) (Policy, error)

// Manager is the resource manager. Create it with New.
type Manager struct {
	log     logr.Logger
	metrics *metrics.Metrics
	topo    *abi.Topology
	limits  *validate.Limits
	node    string
	driver  string

	// swapMu serializes configuration changes and swaps (taken before mu):
	// a swap loads the new policy without mu.
	swapMu  sync.Mutex
	resolve ResolveFunc

	mu         sync.Mutex // the one lock: every request below runs under it
	cfg        *config.Config
	identity   Identity
	journal    *state.Journal
	policy     Policy
	client     *abi.Client
	rebuilds   uint64      // policy.Rebuilds() already counted in metrics
	dropped    uint64      // the policy's DroppedLogs() already counted in metrics
	synced     atomic.Bool // the first Synchronize was handled
	wantsDRA   bool        // the policy's configuration asks for DRA devices
	updateSink func([]*abi.ContainerUpdate)
	// preexisting are the pods the last Synchronize reported and no
	// RunPodSandbox announced since: containerd sends no pod events for pods
	// older than its restart, so such a pod is forgotten with its last
	// container.
	preexisting map[string]bool

	pools poolCache
	// fallback is how the next policy instance is initialized; it only
	// advances, when restoring from the journal fails (fallback.go).
	fallback fallback
	// degraded is why the policy runs without the journal's full state, nil
	// while it has it.
	degraded atomic.Pointer[error]

	saver *saver
	life  lifecycle

	// observers receive every exchange (observe.go); seq numbers them, last
	// is the call in progress.
	observers []Observer
	seq       uint64
	last      lastCall
}

// New loads the checkpoint from the state directory (a corrupt one is logged
// and set aside: the agent starts from what the runtime reports), then loads
// the policy, whose first instance is initialized with that journal. cfg is
// the running configuration, completed and validated; topo the node's
// hardware; load loads the policy (see WasmLoader).
func New(ctx context.Context, cfg *config.Config, topo *abi.Topology, load LoadFunc, opts ...Option) (*Manager, error) {
	switch {
	case cfg == nil:
		return nil, errors.New("resource manager: configuration: nil")
	case topo == nil:
		return nil, errors.New("resource manager: topology: nil")
	case load == nil:
		return nil, errors.New("resource manager: load: nil")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	log := o.logger
	var limitOpts []validate.Option
	if o.availableCPUs != nil {
		limitOpts = append(limitOpts, validate.WithAvailableCPUs(o.availableCPUs))
	}
	limits, err := validate.New(topo, limitOpts...)
	if err != nil {
		return nil, fmt.Errorf("resource manager: %w", err)
	}
	m := &Manager{
		log: log, metrics: o.metrics, topo: topo, node: o.nodeName, driver: o.driverName,
		limits: limits, cfg: cfg, identity: o.identity, resolve: o.resolve,
	}
	ck := state.NewCheckpoint(cfg.StateDir)
	j, err := ck.Load()
	if ce, ok := errors.AsType[*state.CorruptError](err); ok {
		log.Error(ce, "checkpoint is corrupt and was set aside; starting from what the runtime reports")
	} else if err != nil {
		log.Error(err, "checkpoint could not be read; starting from what the runtime reports")
	}
	if err := j.Check(m.limits); err != nil {
		log.Error(err, "checkpoint holds assignments this node refuses; they are dropped")
	}
	m.journal = j
	m.saver = newSaver(ck)
	counts := j.Counts()
	log.Info("journal restored", "pods", counts.Pods, "containers", counts.Containers, "claims", counts.Claims, "checkpoint", ck.Path())

	p, err := m.load(ctx, load)
	if err != nil {
		return nil, fmt.Errorf("load policy %q: %w", cfg.Policy.Name, err)
	}
	m.policy, m.client = p, m.newClient(p)
	m.rebuilds = p.Rebuilds()
	m.dropped = droppedLogs(p)
	if err := m.discoverPools(ctx); err != nil {
		_ = p.Close(ctx)
		return nil, fmt.Errorf("policy %q: %w", cfg.Policy.Name, err)
	}
	m.recordIdentity()
	m.changed()
	m.watchCode(p)
	return m, nil
}

// initialize sends Init with the running policy configuration, the node, the
// topology and rs.
func (m *Manager) initialize(ctx context.Context, t abi.Transport, rs *abi.RestoreState) error {
	resp, err := abi.NewClient(t).Init(ctx, &abi.InitRequest{
		Config: m.cfg.Policy.Data, NodeName: m.node, Topology: m.topo, Restore: rs, DriverName: m.driver,
	})
	if err != nil {
		return err // the client's error names the call (Init)
	}
	m.wantsDRA = resp.GetWantsDra()
	return nil
}

// Ready reports nil once the policy is loaded and the first NRI Synchronize has
// been handled, and while the checkpoint can be saved.
func (m *Manager) Ready() error {
	if !m.synced.Load() {
		return errors.New("waiting for the runtime's first Synchronize")
	}
	if err := m.saver.failing.Load(); err != nil {
		return fmt.Errorf("checkpoint cannot be saved (state directory %s): %w", m.cfg.StateDir, *err)
	}
	if err := m.degraded.Load(); err != nil {
		return *err
	}
	return nil
}

// SetUpdateSink sets where updates the runtime did not ask for go (those of a
// live reconfiguration): the NRI plugin's unsolicited update queue.
func (m *Manager) SetUpdateSink(sink func([]*abi.ContainerUpdate)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.updateSink = sink
}

// Journal returns a copy of the journal's records, for inspection and tests.
func (m *Manager) Journal() *abi.RestoreState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.journal.RestoreState()
}

// changed records a change of the journal: metrics, and a checkpoint soon.
// Called with the lock held (or before Start).
func (m *Manager) changed() {
	c := m.journal.Counts()
	m.metrics.Managed(c.Pods, c.Containers, c.Claims)
	m.saver.kick()
}
