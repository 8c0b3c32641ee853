package balloons_test

import (
	"os"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/sdk/go/native"
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

// teeOpener opens harnesses whose every call is compared; calls counts them.
func teeOpener(calls *int) opener {
	return func(tb testing.TB, machine, config string, restore *abi.RestoreState) (*harness, error) {
		r, err := native.New(balloons.New())
		if err != nil {
			tb.Fatal(err)
		}
		return openOn(tb, policytest.Tee{TB: tb, Want: r, Got: pool.Borrow(tb), Calls: calls}, machine, config, restore)
	}
}

// TestNativeAndWasmAgree runs every scenario on every fixture machine
// natively and through the built-in .wasm, requiring proto.Equal answers at
// every call (DumpState's included, so the states agree too).
func TestNativeAndWasmAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the .wasm")
	}
	total := 0
	for _, m := range machines {
		for _, sc := range scenarios {
			t.Run(m.name+"/"+sc.name, func(t *testing.T) {
				calls := 0
				sc.run(t, teeOpener(&calls), m.name)
				if calls < 10 {
					t.Errorf("only %d calls compared", calls)
				}
				total += calls
			})
		}
	}
	t.Logf("%d calls compared", total)
}
