//go:build !wasip1

package builtintest

import (
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

// run runs the tests, then closes the pools Builds made.
func run(m *testing.M) int {
	code := m.Run()
	mu.Lock()
	for _, p := range pools {
		p.Close()
	}
	pools = nil
	mu.Unlock()
	return code
}
