// Package shadow runs a second policy beside the active one: it receives
// every NRI event and claim call the active policy handled, in the same
// order, after the active answer went back to the runtime or kubelet, and its
// answers are checked and compared, never applied.
//
// The resource manager hands each exchange to Observe under its lock; Observe
// only queues it (a bounded queue), and Run, the shadow's own goroutine,
// sends the request to the shadow policy and compares the two answers with
// host/compare. Nothing the shadow does reaches the active path:
//
//   - A full queue drops the exchange and marks the shadow out of sync; before
//     its next request the shadow's instance is rebuilt from a snapshot of the
//     active journal (resmgr.Manager.Snapshot) and the exchanges that snapshot
//     already reflects are skipped.
//   - A shadow call that traps, times out, runs out of memory or whose
//     instance fails to initialize is counted and the instance rebuilt the
//     same way; WithMaxFailures failures within FailureWindow requests drop the
//     shadow for the life of the process, with an error in the log.
//
// Divergences are counted per method (nriwasm_shadow_divergences_total) and
// the last WithKeep are kept with both answers, served as JSON by Handler (the
// agent's /debug/shadow, read by `nriwasm shadow`).
//
//	s, err := shadow.New("topology-aware", load, topo, limits, m.Snapshot,
//		shadow.WithConfig(data))
//	m.AddObserver(s)
//	m.Go("shadow", s.Run)
package shadow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/compare"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// States of a shadow, as its report names them.
const (
	StateLoading = "loading"
	StateRunning = "running"
	StateDropped = "dropped"
)

// Shadow is a running shadow policy. Create it with New.
type Shadow struct {
	name     string
	load     resmgr.LoadFunc
	topo     *abi.Topology
	limits   *validate.Limits
	snapshot func() (*abi.RestoreState, uint64)
	o        options
	log      logr.Logger
	queue    chan *resmgr.Exchange
	resync   atomic.Bool // exchanges were dropped: rebuild from a snapshot first
	stopped  atomic.Bool // dropped: Observe queues nothing more

	// Owned by Run's goroutine.
	policy   resmgr.Policy
	pending  *abi.RestoreState // what the next instance is initialized with
	skip     uint64            // exchanges up to this Seq are in pending
	session  *compare.Session
	failedAt []uint64 // the Seq of the last maxFailures failed calls

	mu     sync.Mutex // guards report
	report Report
}

// New returns a shadow ready to Observe and Run: the policy called name (in
// logs and the report) that load loads (resmgr.WasmLoader with the shadow's
// own memory limit and call timeout), initialized with topo as the active
// policy is; limits check both sides' answers as the agent checks the
// active policy's; snapshot returns the active journal and the Seq of the
// last exchange it reflects (resmgr.Manager.Snapshot).
func New(name string, load resmgr.LoadFunc, topo *abi.Topology, limits *validate.Limits, snapshot func() (*abi.RestoreState, uint64), opts ...Option) (*Shadow, error) {
	switch {
	case name == "":
		return nil, errors.New("shadow: name: empty")
	case load == nil:
		return nil, errors.New("shadow: load: nil")
	case topo == nil:
		return nil, errors.New("shadow: topology: nil")
	case limits == nil:
		return nil, errors.New("shadow: limits: nil")
	case snapshot == nil:
		return nil, errors.New("shadow: snapshot: nil")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	s := &Shadow{name: name, load: load, topo: topo, limits: limits, snapshot: snapshot, o: o,
		log: o.logger.WithValues("shadow", name), queue: make(chan *resmgr.Exchange, o.queue)}
	s.report = Report{Policy: name, State: StateLoading, Keep: o.keep, Methods: map[string]*MethodStats{}}
	return s, nil
}

// Observe queues an exchange for the shadow, never waiting: when the queue is
// full the exchange is dropped and the shadow resynchronizes. It implements
// resmgr.Observer.
func (s *Shadow) Observe(x *resmgr.Exchange) {
	if s.stopped.Load() {
		return
	}
	select {
	case s.queue <- x:
	default:
		s.resync.Store(true)
		s.count(func(r *Report) { r.Dropped++ })
	}
}

// Run loads the shadow policy and answers the queued exchanges until ctx
// ends or the shadow is dropped. It returns nil: a shadow never stops the
// agent.
func (s *Shadow) Run(ctx context.Context) error {
	s.resync.Store(false)
	s.takeSnapshot()
	p, err := s.load(ctx, s.restore)
	if err != nil {
		s.drop(fmt.Errorf("load shadow policy %q: %w", s.name, err))
		return nil
	}
	s.policy = p
	s.o.metrics.ShadowRunning(true)
	s.count(func(r *Report) { r.State = StateRunning })
	s.log.Info("shadow policy running; its answers are compared, never applied")
	defer func() {
		if !s.stopped.Load() {
			s.closePolicy()
		}
	}()
	// A shadow started on the interpreter (its module in neither cache nor
	// seed) moves to its compiled code once that is ready.
	upgrader, _ := p.(codeUpgrader)
	var compiling <-chan error
	if upgrader != nil {
		compiling = upgrader.Compiling()
	}
	for {
		if s.resync.Swap(false) {
			s.rebuild(metrics.ResyncQueueFull)
			s.log.Info("shadow fell behind and dropped requests; rebuilt from the active journal", "seq", s.skip)
		}
		select {
		case <-ctx.Done():
			return nil
		case _, open := <-compiling:
			if !open {
				compiling = nil
				s.promote(ctx, upgrader)
			}
		case x := <-s.queue:
			s.handle(ctx, x)
			if s.stopped.Load() {
				return nil
			}
		}
	}
}

// rebuild discards the shadow's instance: the next request rebuilds it from
// a snapshot of the active journal taken now.
func (s *Shadow) rebuild(reason string) {
	s.takeSnapshot()
	s.policy.Discard(context.Background())
	s.o.metrics.ShadowResynced(reason)
	s.count(func(r *Report) { r.Resyncs++ })
}

// codeUpgrader is a shadow policy that may start on the interpreter while
// its code compiles (*wasm.Policy with wasm.WithBackgroundCompile).
type codeUpgrader interface {
	Compiling() <-chan error
	Promote(ctx context.Context) (bool, error)
}

// promote moves the shadow to its compiled code, as a rebuild: the compiled
// instance starts from a snapshot of the active journal taken now. When it
// does not move, the instance it keeps is rebuilt from that snapshot too,
// since the exchanges up to it are skipped from now on.
func (s *Shadow) promote(ctx context.Context, u codeUpgrader) {
	s.takeSnapshot()
	moved, err := u.Promote(ctx)
	switch {
	case err != nil:
		s.log.Error(err, "the shadow policy keeps running on the interpreter")
	case moved:
		s.log.Info("shadow policy moved from the interpreter to its compiled code", "seq", s.skip)
		return
	}
	s.policy.Discard(ctx)
}

// takeSnapshot makes the next instance start from the active journal as it
// is now, skipping the exchanges it reflects.
func (s *Shadow) takeSnapshot() {
	s.pending, s.skip = s.snapshot()
	s.session = compare.NewSession(s.limits, s.pending.GetContainers())
}

// restore initializes a shadow instance with its own configuration and the
// pending snapshot; the policy calls it for its first instance and every
// rebuild.
func (s *Shadow) restore(ctx context.Context, t abi.Transport) error {
	_, err := abi.NewClient(t).Init(ctx, &abi.InitRequest{
		Config: s.o.config, NodeName: s.o.nodeName, Topology: s.topo, Restore: s.pending, DriverName: s.o.driverName,
	})
	return err
}

// handle sends one exchange's request to the shadow and compares.
func (s *Shadow) handle(ctx context.Context, x *resmgr.Exchange) {
	if x.Seq <= s.skip {
		return
	}
	resp, err := compare.Call(ctx, s.policy, x.Method, x.Request)
	if kind := failureKind(err); kind != "" {
		s.failed(x, kind, err)
		return
	}
	active := s.session.Outcome(x.Method, x.Request, x.Response, x.Err)
	other := s.session.Outcome(x.Method, x.Request, resp, err)
	s.session.Track(x.Method, x.Request)
	ds := compare.Diff(active, other)
	method := x.Method.Short()
	s.o.metrics.ShadowCompared(method, time.Since(x.At), len(ds) > 0)
	s.count(func(r *Report) {
		r.Compared++
		ms := r.Methods[method]
		if ms == nil {
			ms = &MethodStats{}
			r.Methods[method] = ms
		}
		ms.Compared++
		if len(ds) == 0 {
			return
		}
		r.Divergences++
		ms.Divergences++
		r.Last = append(r.Last, Divergence{
			Seq: x.Seq, Time: x.At.UTC(), Method: method, Subject: compare.Subject(x.Method, x.Request),
			Differences: ds, Active: active, Shadow: other,
		})
		if len(r.Last) > s.o.keep {
			r.Last = r.Last[len(r.Last)-s.o.keep:]
		}
	})
	if len(ds) > 0 && s.log.V(1).Enabled() {
		s.log.V(1).Info("shadow diverged", "method", method, "subject", compare.Subject(x.Method, x.Request), "differences", fmt.Sprint(ds))
	}
}

// FailureWindow is how many requests WithMaxFailures failures must fall within
// to drop a shadow: one that fails on every container, with pod events in
// between that it answers, is dropped; one that traps once in a while is
// rebuilt each time.
const FailureWindow = 100

// failed handles a shadow call's runtime failure: the instance is rebuilt
// from the active journal before the next request, or, the maxFailures-th
// failure within FailureWindow requests, the shadow is dropped.
func (s *Shadow) failed(x *resmgr.Exchange, kind string, err error) {
	s.o.metrics.ShadowFailed(kind)
	s.count(func(r *Report) { r.Failures++ })
	s.failedAt = append(s.failedAt, x.Seq)
	if len(s.failedAt) > s.o.maxFailures {
		s.failedAt = s.failedAt[1:]
	}
	if len(s.failedAt) == s.o.maxFailures && x.Seq-s.failedAt[0] < FailureWindow {
		s.drop(fmt.Errorf("%d shadow calls failed within %d requests, the last %s: %w", s.o.maxFailures, FailureWindow, x.Method.Short(), err))
		return
	}
	s.log.Error(err, "shadow policy call failed; rebuilding it from the active journal (the active policy is unaffected)",
		"method", x.Method.Short(), "failures", len(s.failedAt), "maxFailures", s.o.maxFailures)
	s.rebuild(metrics.ResyncFailure)
}

// drop stops the shadow for the life of the process.
func (s *Shadow) drop(err error) {
	s.stopped.Store(true)
	s.log.Error(err, "shadow policy dropped; the active policy is unaffected (restart the agent to shadow again)")
	s.o.metrics.ShadowRunning(false)
	s.count(func(r *Report) { r.State, r.Reason = StateDropped, err.Error() })
	s.closePolicy()
}

func (s *Shadow) closePolicy() {
	if s.policy == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.policy.Close(ctx); err != nil {
		s.log.Error(err, "closing the shadow policy")
	}
	s.policy = nil
}

// count changes the report under its lock.
func (s *Shadow) count(f func(*Report)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.report)
}

// failureKind names a runtime failure of the shadow's call ("" for success or
// the policy's own refusal, which is an answer to compare).
func failureKind(err error) string {
	kinds := []struct {
		err  error
		name string
	}{
		{wasm.ErrTrap, "trap"}, {wasm.ErrDeadline, "deadline"}, {wasm.ErrOutOfMemory, "out_of_memory"},
		{wasm.ErrExit, "exit"}, {wasm.ErrMalformedResponse, "malformed"}, {wasm.ErrRestore, "restore"},
		{wasm.ErrClosed, "closed"}, {context.DeadlineExceeded, "deadline"},
	}
	if err == nil {
		return ""
	}
	if _, ok := errors.AsType[*abi.PolicyError](err); ok {
		return ""
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "other"
}
