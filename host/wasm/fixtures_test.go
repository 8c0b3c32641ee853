package wasm_test

import (
	_ "embed"
	"os"
	"path/filepath"
	"testing"
)

// The conformance policy, built from sdk/go/conformance by:
//
//	make fixtures
//
// (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath
// -o sdk/go/conformance/conformance.wasm ./sdk/go/conformance/cmd/conformance)
func conformanceModule(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "sdk", "go", "conformance", "conformance.wasm"))
	if err != nil {
		t.Fatalf("read conformance fixture (run make fixtures): %v", err)
	}
	return data
}

// Raw guests that break the calling convention, built from testdata/rawguest by
// make fixtures:
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
