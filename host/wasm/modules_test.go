package wasm_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
)

func TestBadModulesAreRefusedAtLoad(t *testing.T) {
	tests := []struct {
		name   string
		module []byte
		want   []string
	}{
		{"wrong ABI version", rawGuestWrongABI, []string{fmt.Sprintf(`policy "bad" speaks ABI v2.0, this host speaks v%d.%d`, abi.ABIMajor, abi.ABIMinor)}},
		{"missing export", rawGuestNoCall, []string{`missing export "nriwasm_call" (i32, i32) -> (i64)`}},
		{"idle export with a result", wasmtest.WrongIdleModule(nil), []string{`export "nriwasm_idle" must take and return nothing`}},
		{"not wasm", []byte("\x00asm but not really"), []string{`policy "bad": `}},
		{"empty", nil, []string{`policy "bad": `}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := wasm.Load(context.Background(), "bad", tc.module, wasm.WithCacheDir(sharedCache))
			if err == nil {
				p.Close(context.Background())
				t.Fatal("Load succeeded")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestMalformedResponsesAreContained(t *testing.T) {
	p, err := wasm.Load(context.Background(), "raw", rawGuest, wasm.WithCacheDir(sharedCache))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	client := abi.NewClient(p)
	for i, tc := range []struct {
		call func() error
		want string
	}{
		{func() error { _, err := client.Info(context.Background(), &abi.InfoRequest{}); return err }, "decode response"},
		{func() error { _, err := client.DumpState(context.Background(), &abi.DumpStateRequest{}); return err }, "lies outside memory"},
	} {
		err := tc.call()
		if !errors.Is(err, wasm.ErrMalformedResponse) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("error = %v, want ErrMalformedResponse with %q", err, tc.want)
		}
		if got := p.Rebuilds(); got != uint64(i) {
			t.Fatalf("rebuilds = %d before call %d", got, i)
		}
	}
}

func TestOptionsAreValidated(t *testing.T) {
	for _, opt := range []wasm.Option{wasm.WithMemoryLimit(1000), wasm.WithCallTimeout(0), wasm.WithOutputLimit(-1), wasm.WithInterrupt(7)} {
		if _, err := wasm.Load(context.Background(), "x", rawGuest, opt); err == nil || !strings.Contains(err.Error(), `policy "x": `) {
			t.Errorf("Load with a bad option: error = %v", err)
		}
	}
}

func TestCorruptCompilationCacheIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	module := rawGuest
	p, err := wasm.Load(context.Background(), "raw", module, wasm.WithCacheDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	p.Close(context.Background())
	var entries []string
	filepath.WalkDir(filepath.Join(dir, "wazero"), func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			entries = append(entries, path)
		}
		return err
	})
	if len(entries) == 0 {
		t.Fatal("no compilation cache entries written")
	}
	corruptions := map[string]func(string) error{
		"flipped byte": func(path string) error {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			data[len(data)/2] ^= 0xff
			return os.WriteFile(path, data, 0o600)
		},
		"truncated":          func(path string) error { return os.Truncate(path, 10) },
		"garbage manifest":   func(string) error { return os.WriteFile(filepath.Join(dir, "checksums.json"), []byte("{"), 0o600) },
		"missing manifest":   func(string) error { return os.Remove(filepath.Join(dir, "checksums.json")) },
		"unknown extra file": func(string) error { return os.WriteFile(filepath.Join(dir, "wazero", "stray"), []byte("x"), 0o600) },
	}
	bystander := filepath.Join(dir, "not-ours", "tool")
	if err := os.MkdirAll(filepath.Dir(bystander), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bystander, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := os.Stat(bystander); err != nil {
			t.Errorf("a file beside the cache was touched: %v", err)
		}
	})
	for name, corrupt := range corruptions {
		t.Run(name, func(t *testing.T) {
			if err := corrupt(entries[0]); err != nil {
				t.Fatal(err)
			}
			var logs logLines
			p, err := wasm.Load(context.Background(), "raw", module, wasm.WithCacheDir(dir), wasm.WithLogger(logs.logger()))
			if err != nil {
				t.Fatalf("Load with a corrupt cache: %v", err)
			}
			p.Close(context.Background())
			if !logs.contains("compilation cache") {
				t.Errorf("nothing logged about the corrupt cache: %q", logs.lines)
			}
		})
	}
}

func TestUnsealedModuleHasNoMetadata(t *testing.T) {
	if unsealed, err := wasm.ReadMetadata(rawGuest); err != nil || unsealed != nil {
		t.Fatalf("ReadMetadata(unsealed) = %v, %v; want nil, nil", unsealed, err)
	}
}

func TestMetadataDeclaringAnotherABIIsRefusedBeforeCompiling(t *testing.T) {
	md := &abi.PolicyMetadata{Name: "future", Version: "1.0.0", AbiMajor: 2, AbiMinor: 3}
	payload, _ := md.MarshalVT()
	module, err := wasmbin.SetCustomSection(rawGuest, abi.MetadataSection, payload)
	if err != nil {
		t.Fatal(err)
	}
	_, err = wasm.Load(context.Background(), "future", module)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("declares ABI v2.3 in its nriwasm.metadata section, this host speaks v%d.%d", abi.ABIMajor, abi.ABIMinor)) {
		t.Fatalf("error = %v", err)
	}
	garbage, _ := wasmbin.SetCustomSection(rawGuest, abi.MetadataSection, []byte{0xff})
	if _, err := wasm.Load(context.Background(), "garbage", garbage); err == nil || !strings.Contains(err.Error(), "decode nriwasm.metadata section") {
		t.Fatalf("error = %v", err)
	}
}
