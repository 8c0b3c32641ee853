package wasm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Policy is a loaded policy module with one live instance. It implements
// abi.Transport; calls are serialized. After a runtime failure (ErrTrap,
// ErrDeadline, ErrOutOfMemory, ErrExit, ErrMalformedResponse) the instance is
// discarded, and the next call first builds a new one through the RestoreFunc.
type Policy struct {
	name     string
	opts     options
	logger   logr.Logger
	compiled *compiled
	metadata *abi.PolicyMetadata
	// format is the form the policy wants its configuration in, nil until
	// known (configFormat).
	format *abi.ConfigFormat

	mu       sync.Mutex
	inst     *instance
	closed   bool
	rebuilds atomic.Uint64
	// idleTimer runs the idle work WithIdleDelay after the last call (idle.go).
	idleTimer *time.Timer

	// Interpreter first (background.go): next is the compiled code waiting
	// for Promote; compiling, stopBackground and backgroundDone belong to the
	// background compile, nil when none runs.
	next            *compiled
	compiling       chan error
	stopBackground  context.CancelFunc
	backgroundDone  chan struct{}
	compileFailures atomic.Uint64
}

var _ abi.Transport = (*Policy)(nil)

// Load compiles module, checks it, and starts its first instance (running the
// RestoreFunc on it). name identifies the policy in logs and errors. With
// WithBackgroundCompile, a module not compiled yet starts on the interpreter
// (Compiling, Promote).
func Load(ctx context.Context, name string, module []byte, opts ...Option) (*Policy, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("policy %q: %w", name, err)
		}
	}
	if o.background != nil && o.cacheDir == "" {
		return nil, fmt.Errorf("policy %q: background compile: needs a compilation cache (WithCacheDir) for the compiled code to land in", name)
	}
	md, err := ReadMetadata(module)
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", name, err)
	}
	if err := checkMetadata(name, md); err != nil {
		return nil, err
	}
	p := &Policy{name: name, opts: o, logger: o.logger.WithValues("policy", name), metadata: md}
	if md != nil && !o.resealing {
		f := md.GetConfigFormat()
		p.format = &f
	}
	c, err := compile(ctx, name, module, &p.opts, hostLog(p.logger, o.logs))
	if err != nil {
		return nil, err
	}
	p.compiled = c
	instantiating := time.Now()
	if p.inst, err = p.newInstance(ctx, md != nil && !o.resealing, true); err != nil {
		_ = c.close(ctx)
		return nil, err
	}
	p.logger.V(1).Info("policy instance ready", "took", time.Since(instantiating).Round(10*time.Microsecond).String())
	p.startBackground(module)
	return p, nil
}

// Name is the name Load was given.
func (p *Policy) Name() string { return p.name }

// Metadata is the module's metadata section, nil if it has none (an unsealed
// module).
func (p *Policy) Metadata() *abi.PolicyMetadata { return p.metadata.CloneVT() }

// DroppedLogs counts the log messages and output lines of the policy dropped
// since Load for exceeding MaxLogMessagesPerCall or LogBytesPerSecond.
func (p *Policy) DroppedLogs() uint64 { return p.opts.logs.total.Load() }

// Rebuilds counts instances built after a failure.
func (p *Policy) Rebuilds() uint64 { return p.rebuilds.Load() }

// Version is the ABI version the module reports: major<<16 | minor.
func (p *Policy) Version() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inst == nil {
		return 0
	}
	return p.inst.version
}

// Call performs one ABI call. A runtime failure returns a *CallError; a
// policy's refusal is a normal Response holding an Error.
func (p *Policy) Call(ctx context.Context, method abi.Method, req abi.Message) (*abi.Response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, &CallError{Policy: p.name, Method: method, Kind: ErrClosed}
	}
	if p.inst == nil {
		inst, err := p.newInstance(ctx, false, false)
		if err != nil {
			return nil, err
		}
		p.inst = inst
		p.rebuilds.Add(1)
		p.logger.Info("policy instance rebuilt", "rebuilds", p.rebuilds.Load())
	}
	resp, err := p.do(ctx, p.inst, method, req)
	if err != nil && p.inst.broken {
		p.logger.Error(err, "discarding policy instance", "method", method.Short())
		p.inst.close(ctx)
		p.inst = nil
	}
	p.armIdle()
	return resp, err
}

// do performs one call on in, with the configuration of an Init or
// Reconfigure in the form the policy wants.
func (p *Policy) do(ctx context.Context, in *instance, method abi.Method, req abi.Message) (*abi.Response, error) {
	req, answer, err := p.withConfigFormat(ctx, in, req)
	if err != nil || answer != nil {
		return answer, err
	}
	return in.do(ctx, method, req)
}

// Discard drops the current instance, as after a failure: the next call
// builds a new one through the RestoreFunc. The host uses it when an
// instance's state can no longer be trusted.
func (p *Policy) Discard(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inst != nil {
		p.inst.close(ctx)
		p.inst = nil
	}
}

// newInstance instantiates the module and runs the RestoreFunc on it; with
// sealed, it first checks that Info agrees with the sealed metadata. first is
// Load's instance, whose failing RestoreFunc reads as the policy failing to
// start.
func (p *Policy) newInstance(ctx context.Context, sealed, first bool) (*instance, error) {
	inst, err := instantiate(ctx, p.name, p.compiled, &p.opts, p.logger)
	if err != nil {
		return nil, err
	}
	if sealed {
		if err := checkSealed(ctx, p.name, p.metadata, instanceTransport{p, inst}); err != nil {
			inst.close(ctx)
			return nil, err
		}
	}
	if p.opts.restore == nil {
		return inst, nil
	}
	if err := p.opts.restore(ctx, instanceTransport{p, inst}); err != nil {
		inst.close(ctx)
		return nil, &restoreError{policy: p.name, first: first, err: err}
	}
	return inst, nil
}

// instanceTransport calls one instance directly; the RestoreFunc uses it while
// Policy's lock is held.
type instanceTransport struct {
	p    *Policy
	inst *instance
}

func (t instanceTransport) Call(ctx context.Context, method abi.Method, req abi.Message) (*abi.Response, error) {
	if t.inst.broken {
		return nil, &CallError{Policy: t.inst.name, Method: method, Kind: ErrTrap, Err: errors.New("instance failed during restore")}
	}
	return t.p.do(ctx, t.inst, method, req)
}

// Close releases the instance and the compiled module.
func (p *Policy) Close(ctx context.Context) error {
	if p.stopBackground != nil {
		p.stopBackground()
		<-p.backgroundDone
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if p.idleTimer != nil {
		p.idleTimer.Stop()
	}
	if p.inst != nil {
		p.inst.close(ctx)
		p.inst = nil
	}
	if p.next != nil {
		_ = p.next.close(ctx)
		p.next = nil
	}
	return p.compiled.close(ctx)
}
