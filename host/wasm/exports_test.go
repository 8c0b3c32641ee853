package wasm

import (
	"errors"
	"slices"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

func TestExportsOfABuiltInPolicy(t *testing.T) {
	module, _ := builtin.Module("conformance")
	exports, err := Exports(module)
	if err != nil {
		t.Fatal(err)
	}
	has := func(name, kind string) bool { return slices.Contains(exports, Export{Name: name, Kind: kind}) }
	if !has(abi.ExportABIVersion, "func") || !has("memory", "memory") {
		t.Fatalf("exports %v lack %s (func) or memory", exports, abi.ExportABIVersion)
	}
}

func TestExportsOfAMalformedModule(t *testing.T) {
	// A module whose export section claims one entry and ends.
	module := append([]byte(wasmbin.Header), wasmbin.SectionExport, 1, 1)
	if _, err := Exports(module); !errors.Is(err, wasmbin.ErrMalformed) {
		t.Fatalf("Exports = %v, want ErrMalformed", err)
	}
}
