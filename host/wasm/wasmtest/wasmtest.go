// Package wasmtest runs a Go policy's built .wasm beside its Go build in the
// policy's tests: a Pool lends loaded instances of one module (compiled once
// per test binary into a private cache); the SDK's policytest.Tee makes
// every call on both and fails the test on any difference. The pool lives
// on the host side because loading a module takes the host's runtime
// (host/wasm), which the SDK does not import (sdk/go/RATIONALE.md).
//
//	var pool = wasmtest.NewPool("balloons", module)
//	func TestMain(m *testing.M) { code := m.Run(); pool.Close(); os.Exit(code) }
//	...
//	t := policytest.Tee{TB: tb, Want: nativeRunner, Got: pool.Borrow(tb), Calls: &n}
package wasmtest

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/wasm"
)

// Pool lends loaded instances of one module. A borrower must start with Init
// (which rebuilds a policy's whole state), so a returned instance serves the
// next borrower as a fresh one would.
type Pool struct {
	name   string
	module []byte

	mu   sync.Mutex
	dir  string // the compilation cache, created on first use
	free []*wasm.Policy
	all  []*wasm.Policy
}

// NewPool returns a pool of module, called name in logs and errors.
func NewPool(name string, module []byte) *Pool { return &Pool{name: name, module: module} }

// Borrow lends an instance until tb's end. With options (a call timeout, say)
// the instance is loaded afresh for tb and not returned to the pool.
func (p *Pool) Borrow(tb testing.TB, opts ...wasm.Option) *wasm.Policy {
	tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 && len(opts) == 0 {
		inst := p.free[n-1]
		p.free = p.free[:n-1]
		p.giveBackAtEnd(tb, inst)
		return inst
	}
	if p.dir == "" {
		dir, err := os.MkdirTemp("", p.name+"-wasm-cache-")
		if err != nil {
			tb.Fatal(err)
		}
		p.dir = dir
	}
	inst, err := wasm.Load(context.Background(), p.name, p.module, append(opts, wasm.WithCacheDir(p.dir), wasm.WithLogger(logr.Discard()))...)
	if err != nil {
		tb.Fatalf("load %s.wasm: %v", p.name, err)
	}
	p.all = append(p.all, inst)
	if len(opts) == 0 {
		p.giveBackAtEnd(tb, inst)
	}
	return inst
}

func (p *Pool) giveBackAtEnd(tb testing.TB, inst *wasm.Policy) {
	tb.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.free = append(p.free, inst)
	})
}

// Close closes every instance the pool loaded and removes its cache; call it
// from TestMain after the tests.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, inst := range p.all {
		_ = inst.Close(context.Background())
	}
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
	p.all, p.free, p.dir = nil, nil, ""
}
