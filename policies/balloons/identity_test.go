package balloons_test

import (
	"os"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// pool lends loaded instances of the built-in balloons.wasm for the whole
// test binary.
var pool = func() *wasmtest.Pool {
	module, _ := builtin.Module(balloons.Name) // a missing module fails the first Borrow
	return wasmtest.NewPool(balloons.Name, module)
}()

func TestMain(m *testing.M) {
	code := m.Run()
	pool.Close()
	os.Exit(code)
}

// builds are the policy's native build and its built-in .wasm (for
// benchmarks with a call timeout that allows for a loaded machine).
var builds = policytest.Builds{
	New:       func() policy.Policy { return balloons.New() },
	Wasm:      func(tb testing.TB) abi.Transport { return pool.Borrow(tb) },
	BenchWasm: func(tb testing.TB) abi.Transport { return pool.Borrow(tb, wasm.WithCallTimeout(time.Minute)) },
}

// teeOpener opens harnesses whose every call is compared; calls counts them.
var teeOpener = policytest.TeeOpener(builds, openOn)

// TestNativeAndWasmAgree runs every scenario on every fixture machine
// natively and through the built-in .wasm, requiring proto.Equal answers at
// every call (DumpState's included, so the states agree too).
func TestNativeAndWasmAgree(t *testing.T) { policytest.Agree(t, machines, scenarios, 10, teeOpener) }
