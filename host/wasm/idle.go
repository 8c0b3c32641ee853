package wasm

import (
	"context"
	"fmt"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Idle runs the policy's idle work once (the optional nriwasm_idle export: a
// Go guest's garbage collection, abi/README.md section 1), unless no call
// came since the last time or the module has no such export; ran tells
// whether it did. A call that arrives meanwhile waits for it. A failure
// discards the instance, as a failed call does. Load's policies run it on
// their own WithIdleDelay after their last call; benchmarks call it to
// count its cost apart from the decisions'.
func (p *Policy) Idle(ctx context.Context) (ran bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idleLocked(ctx)
}

func (p *Policy) idleLocked(ctx context.Context) (bool, error) {
	in := p.inst
	if p.closed || in == nil || in.idle == nil || in.idled {
		return false, nil
	}
	err := in.invoke(ctx, in.idle, in.opts.callTimeout)
	output := in.out.take()
	if err != nil {
		kind := in.classify(err, output)
		in.close(ctx)
		p.inst = nil
		return true, fmt.Errorf("policy %q: nriwasm_idle: %w: %w%s", p.name, kind, err, outputSuffix(output))
	}
	in.idled = true
	in.logOutput(abi.Method(0), output)
	return true, nil
}

// armIdle schedules the idle work WithIdleDelay after a call; p.mu is held.
func (p *Policy) armIdle() {
	if p.opts.idleDelay == 0 || p.inst == nil || p.inst.idle == nil {
		return
	}
	if p.idleTimer == nil {
		// Made stopped and started below, so that the timer's function,
		// which reads the field, never runs before it is set.
		p.idleTimer = time.AfterFunc(time.Hour, p.idleAfterDelay)
		p.idleTimer.Stop()
	}
	p.idleTimer.Reset(p.opts.idleDelay)
}

// idleAfterDelay is armIdle's timer: it does the idle work, or, while the
// lock is held (a call under way, or the call that armed it not yet
// returned), tries again after the delay.
func (p *Policy) idleAfterDelay() {
	if !p.mu.TryLock() {
		p.idleTimer.Reset(p.opts.idleDelay)
		return
	}
	defer p.mu.Unlock()
	if _, err := p.idleLocked(context.Background()); err != nil {
		p.logger.Error(err, "idle work failed; discarded the policy instance")
	}
}
