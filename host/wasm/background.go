package wasm

import (
	"context"
	"fmt"
	"time"
)

// Interpreter first (WithBackgroundCompile): Load starts a module the cache
// and the seeds lack on wazero's interpreter and compileInBackground has the
// CompileFunc compile it meanwhile; the compiled code waits in p.next until
// Promote moves the policy to it, through the RestoreFunc, as a rebuild.

// compilingBuffer is how many background compile failures Compiling holds
// for a reader that is late; later ones are only counted and logged.
const compilingBuffer = 16

// startBackground starts the background compile of module when Load started
// it on the interpreter for want of compiled code.
func (p *Policy) startBackground(module []byte) {
	if p.opts.background == nil || p.compiled.source != codeInterpreted || p.opts.engine == EngineInterpreter {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.stopBackground = cancel
	p.compiling = make(chan error, compilingBuffer)
	p.backgroundDone = make(chan struct{})
	go p.compileInBackground(ctx, module)
}

// compileInBackground runs the CompileFunc until it succeeds or the policy
// closes, waiting WithCompileRetry's backoff between failures. It owns
// p.compiling and closes it when it ends.
func (p *Policy) compileInBackground(ctx context.Context, module []byte) {
	defer close(p.backgroundDone)
	defer close(p.compiling)
	wait := p.opts.retry
	for attempt := 1; ; attempt++ {
		start := time.Now()
		c, err := p.compileOutside(ctx, module)
		if err == nil {
			p.mu.Lock()
			if p.closed {
				_ = c.close(ctx)
			} else {
				p.next = c
			}
			p.mu.Unlock()
			p.logger.Info("policy compiled in the background; it moves to the compiled code at the next promotion",
				"attempt", attempt, "duration", time.Since(start).Round(time.Millisecond).String(), "source", c.source.String())
			return
		}
		if ctx.Err() != nil {
			return
		}
		p.compileFailures.Add(1)
		p.logger.Error(err, "background compile failed; the policy keeps running on the interpreter",
			"attempt", attempt, "retryIn", wait.String())
		select {
		case p.compiling <- err:
		default:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, p.opts.retryMax)
	}
}

// compileOutside has the CompileFunc compile module into a seed and loads
// the compiled code from it into the cache. A seed that does not hold the
// module for this agent is a failure: compiling it here would hold the
// compile's memory peak in the agent.
func (p *Policy) compileOutside(ctx context.Context, module []byte) (*compiled, error) {
	dir, cleanup, err := p.opts.background(ctx, module)
	if err != nil {
		return nil, fmt.Errorf("policy %q: background compile: %w", p.name, err)
	}
	defer cleanup()
	if NeedsCompile(p.opts.cacheDir, module, dir) {
		return nil, fmt.Errorf("policy %q: background compile: the seed %s holds no compiled code of this module for this agent (wazero build, CPU features, instrumentation)", p.name, dir)
	}
	o := p.opts
	o.seedDirs, o.background = []string{dir}, nil
	return compile(ctx, p.name, module, &o, hostLog(p.logger, o.logs))
}

// Compiling is nil unless Load started the policy on the interpreter while
// its code compiles in the background (WithBackgroundCompile). Then it
// yields each failed compile's error (those a late reader missed are still
// logged and counted by CompileFailures) and is closed when the compiled
// code is ready for Promote, or when the policy closes.
func (p *Policy) Compiling() <-chan error { return p.compiling }

// CompileFailures counts the background compiles that failed since Load.
func (p *Policy) CompileFailures() uint64 { return p.compileFailures.Load() }

// Engine is the engine the policy's code runs on now.
func (p *Policy) Engine() Engine {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.compiled.source == codeInterpreted {
		return EngineInterpreter
	}
	return EngineCompiler
}

// Promote moves a policy running on the interpreter to its compiled code
// once the background compile has produced it: a new instance of the
// compiled module, brought up to date by the RestoreFunc (as a rebuild after
// a failure), replaces the interpreter's, which is closed. It reports
// whether it moved. The caller must allow the RestoreFunc to run, as for
// any call (the resource manager holds its lock). If the new instance
// cannot start or restore, the policy stays on the interpreter and the
// error says why.
func (p *Policy) Promote(ctx context.Context) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.next == nil {
		return false, nil
	}
	next, old := p.next, p.compiled
	p.next = nil
	p.compiled = next
	inst, err := p.newInstance(ctx, false, false)
	if err != nil {
		p.compiled = old
		_ = next.close(ctx)
		return false, fmt.Errorf("policy %q: move to the compiled code: %w; it stays on the interpreter", p.name, err)
	}
	if p.inst != nil {
		p.inst.close(ctx)
	}
	p.inst = inst
	if err := old.close(ctx); err != nil {
		p.logger.Error(err, "closing the interpreter's runtime")
	}
	p.logger.Info("policy moved to its compiled code", "source", next.source.String())
	return true, nil
}
