package balloons_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"google.golang.org/protobuf/proto"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/sdk/go/native"
)

// wasmPool lends loaded instances of the built-in balloons.wasm. Every
// harness starts with Init, which rebuilds the policy's whole state, so a
// returned instance serves the next test as a fresh one would; the compiled
// code is cached in one directory for the whole test binary.
var wasmPool struct {
	sync.Mutex
	dir  string
	free []*wasm.Policy
	all  []*wasm.Policy
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, p := range wasmPool.all {
		_ = p.Close(context.Background())
	}
	if wasmPool.dir != "" {
		_ = os.RemoveAll(wasmPool.dir)
	}
	os.Exit(code)
}

// borrowWasm lends an instance until tb's end.
func borrowWasm(tb testing.TB, opts ...wasm.Option) *wasm.Policy {
	tb.Helper()
	wasmPool.Lock()
	defer wasmPool.Unlock()
	var p *wasm.Policy
	if n := len(wasmPool.free); n > 0 && len(opts) == 0 {
		p, wasmPool.free = wasmPool.free[n-1], wasmPool.free[:n-1]
	} else {
		if wasmPool.dir == "" {
			dir, err := os.MkdirTemp("", "balloons-wasm-cache-")
			if err != nil {
				tb.Fatal(err)
			}
			wasmPool.dir = dir
		}
		module, ok := builtin.Module(balloons.Name)
		if !ok {
			tb.Fatalf("no built-in %s module", balloons.Name)
		}
		var err error
		if p, err = wasm.Load(context.Background(), balloons.Name, module, append(opts, wasm.WithCacheDir(wasmPool.dir), wasm.WithLogger(logr.Discard()))...); err != nil {
			tb.Fatalf("load %s.wasm: %v", balloons.Name, err)
		}
		wasmPool.all = append(wasmPool.all, p)
	}
	if len(opts) == 0 {
		tb.Cleanup(func() {
			wasmPool.Lock()
			defer wasmPool.Unlock()
			wasmPool.free = append(wasmPool.free, p)
		})
	}
	return p
}

// tee is a transport that makes every call natively and in Wasm, requires
// proto.Equal answers (errors included), and hands on the native one.
type tee struct {
	tb     testing.TB
	native abi.Transport
	wasm   abi.Transport
	calls  *int
}

func (t tee) Call(ctx context.Context, method abi.Method, req abi.Message) (*abi.Response, error) {
	t.tb.Helper()
	want, err := t.native.Call(ctx, method, req)
	if err != nil {
		t.tb.Fatalf("call %d %s natively: %v", *t.calls, method.Short(), err)
	}
	got, err := t.wasm.Call(ctx, method, req)
	if err != nil {
		t.tb.Fatalf("call %d %s in Wasm: %v", *t.calls, method.Short(), err)
	}
	if !proto.Equal(got, want) {
		t.tb.Fatalf("call %d %s: Wasm answered\n%v\nnative\n%v", *t.calls, method.Short(), got, want)
	}
	*t.calls++
	return want, nil
}

// teeOpener opens harnesses whose every call is compared; calls counts them.
func teeOpener(calls *int) opener {
	return func(tb testing.TB, machine, config string, restore *abi.RestoreState) (*harness, error) {
		r, err := native.New(balloons.New())
		if err != nil {
			tb.Fatal(err)
		}
		return openOn(tb, tee{tb: tb, native: r, wasm: borrowWasm(tb), calls: calls}, machine, config, restore)
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
