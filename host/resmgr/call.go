package resmgr

import (
	"context"
	"errors"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// replyMargin is kept from the caller's deadline for sending the answer back.
const replyMargin = 100 * time.Millisecond

// call runs one policy call under the lock (the caller holds it). Each attempt
// is bounded by policy.callTimeout and by the caller's deadline less
// replyMargin. After a runtime failure (a trap, deadline, out-of-memory, exit
// or malformed answer) the policy has discarded its instance; the call is
// retried once, and the retry first rebuilds the instance from the journal.
//
// Every call but Pools may change a decision, so it marks the pools stale.
func (m *Manager) call(ctx context.Context, method abi.Method, do func(context.Context) error) error {
	start := time.Now()
	if method != abi.Method_METHOD_POOLS {
		m.pools.stale = true
	}
	fb := m.fallback
	err := m.attempt(ctx, do)
	if runtimeFailure(err) {
		if m.budget(ctx) > 0 {
			m.log.Error(err, "policy call failed; retrying once on a rebuilt instance", "method", method.Short())
			err = m.attempt(ctx, do)
		}
	}
	// A rebuild whose restore failed fell back (fallback.go): try the next
	// way of initializing an instance, as long as there is one.
	for errors.Is(err, wasm.ErrRestore) && m.fallback != fb && m.budget(ctx) > 0 {
		fb = m.fallback
		err = m.attempt(ctx, do)
	}
	m.pools.down = runtimeFailure(err) || errors.Is(err, wasm.ErrRestore)
	if isAnswerError(err) {
		m.refused(method, err)
	}
	m.metrics.ObserveCall(method.Short(), time.Since(start), errorKind(err))
	m.publish(err)
	if n := m.policy.Rebuilds(); n > m.rebuilds {
		m.metrics.Rebuilt(n - m.rebuilds)
		m.rebuilds = n
	}
	if n := droppedLogs(m.policy); n > m.dropped {
		m.metrics.LogsDropped(n - m.dropped)
		m.dropped = n
	}
	return err
}

// attempt runs do once with its deadline.
func (m *Manager) attempt(ctx context.Context, do func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, m.budget(ctx))
	defer cancel()
	return do(cctx)
}

// budget is the time one attempt may take: the call timeout, or less when the
// caller's deadline comes sooner.
func (m *Manager) budget(ctx context.Context) time.Duration {
	d := time.Duration(m.cfg.Policy.CallTimeout)
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)-replyMargin)
	}
	return d
}

// runtimeFailure reports whether err discarded the policy's instance.
func runtimeFailure(err error) bool {
	for _, kind := range []error{wasm.ErrTrap, wasm.ErrDeadline, wasm.ErrOutOfMemory, wasm.ErrExit, wasm.ErrMalformedResponse} {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}

// errorKind names err for metrics: "" for success.
func errorKind(err error) string {
	kinds := []struct {
		err  error
		name string
	}{
		{wasm.ErrTrap, "trap"}, {wasm.ErrDeadline, "deadline"}, {wasm.ErrOutOfMemory, "out_of_memory"},
		{wasm.ErrExit, "exit"}, {wasm.ErrMalformedResponse, "malformed"}, {wasm.ErrRestore, "restore"},
		{wasm.ErrClosed, "closed"}, {context.DeadlineExceeded, "deadline"},
	}
	switch {
	case err == nil:
		return ""
	case isPolicyError(err):
		return "policy"
	case isInvalid(err), isAnswerError(err):
		return "invalid"
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "other"
}

func isPolicyError(err error) bool {
	_, ok := errors.AsType[*abi.PolicyError](err)
	return ok
}

func isInvalid(err error) bool {
	_, ok := errors.AsType[*validate.Error](err)
	return ok
}

// isAnswerError reports whether the client refused a malformed answer (a bad
// group of updates) before the checks saw it.
func isAnswerError(err error) bool {
	_, ok := errors.AsType[*abi.AnswerError](err)
	return ok
}

func asInvalid(err error) *validate.Error {
	v, _ := errors.AsType[*validate.Error](err)
	return v
}
