// Package builtintest runs the built-in policies (policies/builtin) in
// tests: a Go policy's two builds for the SDK's policytest (its Go build and
// its built-in .wasm, instances lent by one pool per test binary) and the
// modules themselves.
//
// It joins the ABI's two sides, the host's Wasm runtime (host/wasm) and the
// SDK, so only tests may import it: a host, SDK or policy package that did
// would depend on the other side, which abi/v1's TestLayering refuses. It
// builds for the host only, not for wasip1.
package builtintest

import (
	"os"
	"sync"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// BenchCallTimeout is the call timeout of the .wasm instances benchmarks
// borrow (Builds' BenchWasm): room for a loaded machine.
const BenchCallTimeout = time.Minute

var (
	mu    sync.Mutex
	pools []*wasmtest.Pool
)

// Builds are the built-in policy name's two builds: newPolicy natively, and
// instances of policies/builtin's name.wasm lent by a pool that lives as
// long as the test binary (Main closes it). A missing module fails the first
// test that borrows one.
func Builds(name string, newPolicy func() policy.Policy) policytest.Builds {
	module, _ := builtin.Module(name)
	pool := wasmtest.NewPool(name, module)
	mu.Lock()
	pools = append(pools, pool)
	mu.Unlock()
	return policytest.Builds{
		New:       newPolicy,
		Wasm:      func(tb testing.TB) abi.Transport { return pool.Borrow(tb) },
		BenchWasm: func(tb testing.TB) abi.Transport { return pool.Borrow(tb, wasm.WithCallTimeout(BenchCallTimeout)) },
	}
}

// Main runs a test binary's tests, closes the pools Builds made and exits
// with the tests' code: the TestMain of a package that uses Builds.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	for _, p := range pools {
		p.Close()
	}
	pools = nil
	mu.Unlock()
	os.Exit(code)
}

// Module is policies/builtin's name.wasm; the test fails, saying how to
// build it, if there is none.
func Module(tb testing.TB, name string) []byte {
	tb.Helper()
	m, ok := builtin.Module(name)
	if !ok {
		tb.Fatalf("policies/builtin has no %s.wasm (make policies builds it; builtin.Names: %v)", name, builtin.Names())
	}
	return m
}
