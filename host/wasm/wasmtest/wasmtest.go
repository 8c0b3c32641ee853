// Package wasmtest runs a Go policy's built .wasm beside its Go build in the
// policy's tests: a Pool lends loaded instances of one module (compiled once
// per test binary into a private cache), and a Tee makes every call both
// natively and in Wasm and fails the test on any difference.
//
//	var pool = wasmtest.NewPool("balloons", module)
//	func TestMain(m *testing.M) { code := m.Run(); pool.Close(); os.Exit(code) }
//	...
//	t := wasmtest.Tee{TB: tb, Native: nativeRunner, Wasm: pool.Borrow(tb), Calls: &n}
package wasmtest

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"google.golang.org/protobuf/proto"

	abi "github.com/nriwasm/nriwasm/abi/v1"
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

// Tee is a transport that makes every call natively and in Wasm, requires
// proto.Equal answers (policy errors included), and hands on the native one.
// Calls counts the calls compared.
type Tee struct {
	TB     testing.TB
	Native abi.Transport
	Wasm   abi.Transport
	Calls  *int
}

// Call implements abi.Transport.
func (t Tee) Call(ctx context.Context, method abi.Method, req abi.Message) (*abi.Response, error) {
	t.TB.Helper()
	want, err := t.Native.Call(ctx, method, req)
	if err != nil {
		t.TB.Fatalf("call %d %s natively: %v", *t.Calls, method.Short(), err)
	}
	got, err := t.Wasm.Call(ctx, method, req)
	if err != nil {
		t.TB.Fatalf("call %d %s in Wasm: %v", *t.Calls, method.Short(), err)
	}
	if !proto.Equal(got, want) {
		t.TB.Fatalf("call %d %s: Wasm answered\n%v\nnative\n%v", *t.Calls, method.Short(), got, want)
	}
	*t.Calls++
	return want, nil
}
