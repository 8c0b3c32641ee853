package wasmtest_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

var pool = func() *wasmtest.Pool {
	module, _ := builtin.Module("conformance")
	return wasmtest.NewPool("conformance", module)
}()

func TestMain(m *testing.M) {
	code := m.Run()
	pool.Close()
	os.Exit(code)
}

// recorder is a testing.TB whose Fatalf records instead of stopping.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestPoolLendsOneInstanceAfterAnother(t *testing.T) {
	var first any
	t.Run("borrow", func(t *testing.T) { first = pool.Borrow(t) })
	t.Run("again", func(t *testing.T) {
		if got := pool.Borrow(t); got != first {
			t.Error("a returned instance was not lent again")
		}
		if other := pool.Borrow(t); other == first {
			t.Error("one instance lent twice at once")
		}
	})
}

func TestTeeFailsOnADifference(t *testing.T) {
	r, err := native.New(&conformance.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	rec := &recorder{TB: t}
	tee := policytest.Tee{TB: rec, Want: r, Got: pool.Borrow(t), Calls: &calls}
	c := abi.NewClient(tee)
	ctx := context.Background()
	if _, err := c.Init(ctx, &abi.InitRequest{}); err != nil || rec.failed != "" || calls != 1 {
		t.Fatalf("the same policy both ways: err %v, failure %q, calls %d", err, rec.failed, calls)
	}
	// A call only the native side saw: its event log, and so DumpState, differ.
	if _, err := r.Call(ctx, abi.Method_METHOD_DEVICES, &abi.DevicesRequest{}); err != nil {
		t.Fatal(err)
	}
	_, _ = c.DumpState(ctx, &abi.DumpStateRequest{})
	if rec.failed == "" {
		t.Fatal("different DumpState answers went unnoticed")
	}
}
