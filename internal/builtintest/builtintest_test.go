package builtintest_test

import (
	"context"
	"os"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/internal/builtintest"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// cacheDir is the test binary's compiled-code cache (MainWithCache).
var cacheDir string

func TestMain(m *testing.M) { builtintest.MainWithCache(m, &cacheDir) }

// TestMainWithCache: the tests run with a cache directory there.
func TestMainWithCache(t *testing.T) {
	if fi, err := os.Stat(cacheDir); err != nil || !fi.IsDir() {
		t.Errorf("cache %q: %v, want a directory", cacheDir, err)
	}
}

var builds = builtintest.Builds("conformance", func() policy.Policy { return &conformance.Policy{} })

// TestBuildsAnswerAlike: the Go build and the built-in .wasm Builds lends
// answer an Init alike (through policytest's Tee, which compares them), for
// the tests and the benchmarks.
func TestBuildsAnswerAlike(t *testing.T) {
	calls := 0
	tee := builds.Tee(t, &calls)
	req := &abi.InitRequest{NodeName: "n1", Topology: policytest.Machine(t, "TwoCPU")}
	if _, err := tee.Call(context.Background(), abi.Method_METHOD_INIT, req); err != nil {
		t.Fatalf("Init: %v", err)
	}
	if calls != 1 {
		t.Errorf("%d calls compared, want 1", calls)
	}
	bench := builds.Transports()[1].Open(t)
	if _, err := bench.Call(context.Background(), abi.Method_METHOD_INIT, req); err != nil {
		t.Errorf("Init on the benchmarks' instance: %v", err)
	}
}

// TestModule: a built-in module is there; a missing one fails the test,
// naming the modules there are.
func TestModule(t *testing.T) {
	want, _ := builtin.Module("conformance")
	if got := builtintest.Module(t, "conformance"); len(got) == 0 || len(got) != len(want) {
		t.Errorf("Module(conformance) has %d bytes, want %d", len(got), len(want))
	}
	fake := &recorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		builtintest.Module(fake, "no-such-policy")
	}()
	if !fake.failed {
		t.Error("Module(no-such-policy) did not fail the test")
	}
}

// recorder is a testing.TB whose Fatalf records the failure and stops the
// caller by panicking.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(string, ...any) {
	r.failed = true
	panic("Fatalf")
}
