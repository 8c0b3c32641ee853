package wasm_test

import (
	_ "embed"
	"os"
	"testing"

	"github.com/nriwasm/nriwasm/policies/builtin"
)

// conformanceModule is the conformance policy, built into policies/builtin from
// sdk/go/conformance by `make policies`.
func conformanceModule(t testing.TB) []byte {
	t.Helper()
	data, ok := builtin.Module("conformance")
	if !ok {
		t.Fatal("policies/builtin lacks conformance.wasm: run make policies")
	}
	return data
}

// rustConformance is the same policy written with the Rust SDK
// (sdk/rust/conformance), built and sealed by make policies:
//
//	cargo build --release --target wasm32-wasi --manifest-path sdk/rust/conformance/Cargo.toml
//	nriwasm policy seal testdata/conformance-rust.wasm
//
//go:embed testdata/conformance-rust.wasm
var rustConformance []byte

// Raw guests that break the calling convention, built from testdata/rawguest by
// make policies:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath [-tags wrongabi|nocall] -o testdata/rawguest[-TAG].wasm ./testdata/rawguest
var (
	//go:embed testdata/rawguest.wasm
	rawGuest []byte
	//go:embed testdata/rawguest-wrongabi.wasm
	rawGuestWrongABI []byte
	//go:embed testdata/rawguest-nocall.wasm
	rawGuestNoCall []byte
)

// sharedCache keeps compiled fixtures across the tests of this package, so only
// the first Load of each module pays for compilation.
var sharedCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "nriwasm-wasm-test-")
	if err != nil {
		panic(err)
	}
	sharedCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
