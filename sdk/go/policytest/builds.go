package policytest

import (
	"context"
	"fmt"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// Builds are the two builds of one policy its tests run: the native one,
// from New, and its .wasm, lent by Wasm (host/wasm/wasmtest's Pool.Borrow,
// which the SDK cannot import: sdk/go/RATIONALE.md).
type Builds struct {
	// New returns a fresh policy for the native build.
	New func() policy.Policy
	// Wasm lends a loaded instance of the .wasm until tb's end.
	Wasm func(tb testing.TB) abi.Transport
	// BenchWasm, when set, lends the .wasm instance benchmarks use
	// (Transports): one with a longer call timeout for a loaded machine,
	// say. Wasm otherwise.
	BenchWasm func(tb testing.TB) abi.Transport
}

// SelfBuilds are the Builds of a test binary built for wasip1 (GOOS=wasip1
// go test, run by a Wasm runtime): there the Go build is the Wasm build, so
// the build compared to it (Wasm) is a second instance of it, and the
// side-by-side tests compare two instances call by call.
func SelfBuilds(newPolicy func() policy.Policy) Builds {
	b := Builds{New: newPolicy}
	b.Wasm = b.Native
	return b
}

// Native starts a fresh native instance of the policy.
func (b Builds) Native(tb testing.TB) abi.Transport {
	r, err := native.New(b.New())
	if err != nil {
		tb.Fatalf("native build: %v", err)
	}
	return r
}

// Tee is a transport that makes every call on both builds and requires the
// same answers (Tee, the native build the reference); calls counts the
// calls compared.
func (b Builds) Tee(tb testing.TB, calls *int) abi.Transport {
	return Tee{TB: tb, Want: b.Native(tb), Got: b.Wasm(tb), Calls: calls}
}

// Transport is one way a benchmark runs the policy.
type Transport struct {
	// Name names the sub-benchmark: "native" or "wasm".
	Name string
	// Open starts an instance.
	Open func(tb testing.TB) abi.Transport
}

// Transports are the native build and the .wasm (BenchWasm's, if set), in
// that order.
func (b Builds) Transports() []Transport {
	wasm := b.Wasm
	if b.BenchWasm != nil {
		wasm = b.BenchWasm
	}
	return []Transport{{"native", b.Native}, {"wasm", wasm}}
}

// Opener starts a policy instance on a fixture machine, with a
// configuration and a restore state, as a test harness H (the policy's
// tests' own type, around a Runtime).
type Opener[H any] func(tb testing.TB, machine, config string, restore *abi.RestoreState) (H, error)

// OpenOn opens a harness H on a transport: the policy's tests' own start-up
// (the Init request, the invariant checks).
type OpenOn[H any] func(tb testing.TB, t abi.Transport, machine, config string, restore *abi.RestoreState) (H, error)

// NativeOpener opens harnesses on fresh native builds.
func NativeOpener[H any](b Builds, on OpenOn[H]) Opener[H] {
	return func(tb testing.TB, machine, config string, restore *abi.RestoreState) (H, error) {
		return on(tb, b.Native(tb), machine, config, restore)
	}
}

// TeeOpener gives, for a count of calls, an Opener of harnesses on both
// builds at once (Builds.Tee): what Agree takes.
func TeeOpener[H any](b Builds, on OpenOn[H]) func(calls *int) Opener[H] {
	return func(calls *int) Opener[H] {
		return func(tb testing.TB, machine, config string, restore *abi.RestoreState) (H, error) {
			return on(tb, b.Tee(tb, calls), machine, config, restore)
		}
	}
}

// Scenario is a named test of a policy, run on a fixture machine with open,
// the policy's tests' own way to start a harness (O: natively, or on both
// builds at once).
type Scenario[O any] struct {
	Name string
	Run  func(t *testing.T, open O, machine string)
}

// Agree runs every scenario on every machine with the opener tee gives for
// a count of calls (one running both builds call by call: Builds.Tee), and
// requires at least minCalls calls compared in each. It loads the .wasm, so
// -short skips it.
func Agree[O any](t *testing.T, machines []string, scenarios []Scenario[O], minCalls int, tee func(calls *int) O) {
	if testing.Short() {
		t.Skip("loads the .wasm")
	}
	total := 0
	for _, m := range machines {
		for _, sc := range scenarios {
			t.Run(m+"/"+sc.Name, func(t *testing.T) {
				calls := 0
				sc.Run(t, tee(&calls), m)
				if calls < minCalls {
					t.Errorf("only %d calls compared, want at least %d", calls, minCalls)
				}
				total += calls
			})
		}
	}
	t.Logf("%d calls compared", total)
}

// BenchInit times Init of req on each transport: empty, and restoring, for
// each n of lives, the state restore builds with n live containers (on
// transports[0], untimed). It reports the median and 99th percentile
// (Latencies.Report).
func BenchInit(b *testing.B, transports []Transport, req *abi.InitRequest, restore func(b *testing.B, n int) *abi.RestoreState, lives ...int) {
	for _, tr := range transports {
		for _, n := range append([]int{0}, lives...) {
			name := tr.Name + "/empty"
			if n > 0 {
				name = fmt.Sprintf("%s/restore%d", tr.Name, n)
			}
			b.Run(name, func(b *testing.B) {
				req := req.CloneVT()
				if n > 0 {
					req.Restore = restore(b, n)
				}
				client := abi.NewClient(tr.Open(b))
				times := make(Latencies, 0, b.N)
				b.ResetTimer()
				for range b.N {
					start := time.Now()
					if _, err := client.Init(context.Background(), req); err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(start))
				}
				times.Report(b, "")
			})
		}
	}
}
