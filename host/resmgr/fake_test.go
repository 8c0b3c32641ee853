package resmgr_test

import (
	"context"
	"sync"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// fakePolicy runs the conformance policy natively and behaves like
// wasm.Policy around failures: a call listed in traps fails with ErrTrap,
// discards the instance, and the next call first builds a new one through the
// restore hook.
type fakePolicy struct {
	mu       sync.Mutex
	restore  wasm.RestoreFunc
	inst     *native.Runner
	traps    map[abi.Method]int // calls of the method left to trap
	calls    map[abi.Method]int
	rebuilds uint64
	inits    []*abi.InitRequest
	newPol   func() policy.Policy // default: the conformance policy
}

func newFake(traps map[abi.Method]int) *fakePolicy {
	if traps == nil {
		traps = map[abi.Method]int{}
	}
	return &fakePolicy{traps: traps, calls: map[abi.Method]int{}}
}

func (f *fakePolicy) load(ctx context.Context, restore wasm.RestoreFunc) (resmgr.Policy, error) {
	f.restore = restore
	if err := f.build(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *fakePolicy) build(ctx context.Context) error {
	var p policy.Policy = &conformance.Policy{}
	if f.newPol != nil {
		p = f.newPol()
	}
	r, err := native.New(p)
	if err != nil {
		return err
	}
	if err := f.restore(ctx, recorder{f, r}); err != nil {
		return &wasm.CallError{Policy: "fake", Method: abi.Method_METHOD_INIT, Kind: wasm.ErrRestore, Err: err}
	}
	f.inst = r
	return nil
}

func (f *fakePolicy) Call(ctx context.Context, m abi.Method, req abi.Message) (*abi.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inst == nil {
		if err := f.build(ctx); err != nil {
			return nil, err
		}
		f.rebuilds++
	}
	f.calls[m]++
	if f.traps[m] > 0 {
		f.traps[m]--
		f.inst = nil
		return nil, &wasm.CallError{Policy: "fake", Method: m, Kind: wasm.ErrTrap}
	}
	return f.inst.Call(ctx, m, req)
}

func (f *fakePolicy) Rebuilds() uint64 { f.mu.Lock(); defer f.mu.Unlock(); return f.rebuilds }

func (f *fakePolicy) Close(context.Context) error { return nil }

func (f *fakePolicy) Discard(context.Context) { f.mu.Lock(); defer f.mu.Unlock(); f.inst = nil }

// recorder keeps the Init requests the restore hook sends.
type recorder struct {
	f *fakePolicy
	r *native.Runner
}

func (r recorder) Call(ctx context.Context, m abi.Method, req abi.Message) (*abi.Response, error) {
	if init, ok := req.(*abi.InitRequest); ok {
		r.f.inits = append(r.f.inits, init.CloneVT())
	}
	return r.r.Call(ctx, m, req)
}
