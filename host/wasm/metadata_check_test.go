package wasm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
)

func metadata(name, version string) *abi.PolicyMetadata {
	return &abi.PolicyMetadata{Name: name, Version: version, AbiMajor: abi.ABIMajor, AbiMinor: abi.ABIMinor}
}

// sealedAnswering is a module that answers Info with info and carries sealed
// as its metadata section.
func sealedAnswering(t *testing.T, info, sealed *abi.PolicyMetadata) []byte {
	t.Helper()
	answer, err := (&abi.Response{Result: &abi.Response_Info{Info: &abi.InfoResponse{Metadata: info}}}).MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	payload, err := sealed.MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	module, err := wasmbin.SetCustomSection(wasmtest.AnsweringModule(answer, 0), abi.MetadataSection, payload)
	if err != nil {
		t.Fatal(err)
	}
	return module
}

// TestMetadataChecks loads modules whose metadata a host must refuse.
func TestMetadataChecks(t *testing.T) {
	good := metadata("good-policy", "1.2.3")
	twoSections := sealedAnswering(t, good, good)
	payload, _ := good.MarshalVT()
	custom := wasmbin.AppendName(nil, abi.MetadataSection)
	twoSections = append(append(wasmbin.AppendU32(append(twoSections, wasmbin.SectionCustom), uint32(len(custom)+len(payload))), custom...), payload...)
	tests := []struct {
		name   string
		module []byte
		want   string
	}{
		{"not Wasm", []byte("#!/bin/sh\necho hi\n"), `not a WebAssembly module: starts with "#!/bin/s"`},
		{"two metadata sections", twoSections, "2 nriwasm.metadata sections, want at most one"},
		{"name not a DNS label", sealedAnswering(t, metadata("Bad_Name", "1.0.0"), metadata("Bad_Name", "1.0.0")), `name "Bad_Name" is not a DNS label`},
		{"version not semver", sealedAnswering(t, metadata("p", "v1.0"), metadata("p", "v1.0")), `version "v1.0" is not semver`},
		{"seal disagrees with Info", sealedAnswering(t, metadata("other", "2.0.0"), good), "(good-policy 1.2.3) disagrees with what Info answers (other 2.0.0)"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := wasm.Load(ctx, "p", tt.module, wasm.WithLogger(logr.Discard()))
			if err == nil {
				p.Close(ctx)
				t.Fatal("Load succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	t.Run("not Wasm is ErrNotWasm", func(t *testing.T) {
		if _, err := wasm.ReadMetadata([]byte("PK\x03\x04")); !errors.Is(err, wasm.ErrNotWasm) {
			t.Fatalf("ReadMetadata error = %v, want %v", err, wasm.ErrNotWasm)
		}
	})
	t.Run("seal that agrees loads", func(t *testing.T) {
		p, err := wasm.Load(ctx, "p", sealedAnswering(t, good, good), wasm.WithLogger(logr.Discard()))
		if err != nil {
			t.Fatal(err)
		}
		p.Close(ctx)
	})
}
