// Package builtintest runs the built-in policies (policies/builtin) in
// tests: a Go policy's two builds for the SDK's policytest (its Go build and
// its built-in .wasm, instances lent by one pool per test binary) and the
// modules themselves.
//
// It joins the ABI's two sides, the host's Wasm runtime (host/wasm) and the
// SDK, so only tests may import it: a host, SDK or policy package that did
// would depend on the other side, which abi/v1's TestLayering refuses.
//
// Built for wasip1 (the policies' tests vetted or run as Wasm), there is no
// host runtime to load a module with: Builds are then two instances of the
// Go build, which is the Wasm build there (policytest.SelfBuilds).
package builtintest

import (
	"fmt"
	"os"
	"testing"

	"github.com/nriwasm/nriwasm/policies/builtin"
)

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

// Main runs a test binary's tests and exits with their code, closing the
// pools Builds made: the TestMain of a package that uses Builds.
func Main(m *testing.M) { os.Exit(run(m)) }

// MainWithCache is Main with *dir a fresh directory for the test binary's
// compiled-code cache (wasm.WithCacheDir), so that each module compiles
// once, removed after the tests.
func MainWithCache(m *testing.M, dir *string) {
	d, err := os.MkdirTemp("", "nriwasm-test-cache-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "compiled-code cache: %v\n", err)
		os.Exit(2)
	}
	*dir = d
	code := run(m)
	os.RemoveAll(d)
	os.Exit(code)
}
