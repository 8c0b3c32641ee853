package oci

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/nriwasm/nriwasm/internal/builtintest"
)

// TestCorruptIndexIsHealed: with the cache's index.json corrupt, a restarted
// fetcher sets it aside and pulls again while the registry is up.
func TestCorruptIndexIsHealed(t *testing.T) {
	ctx := context.Background()
	module := builtintest.Module(t, "conformance")
	reg := newRegistry(t)
	r := reg.ref(t, "policies/conformance:v1")
	push(t, reg.remote(), r, module)
	cache := t.TempDir()
	f := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(cache))
	if _, err := f.Load(ctx, r); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(cache, ocispec.ImageIndexFile)
	if err := os.WriteFile(index, []byte(`{"schemaVersion":2,"manifests":[{"mediaType`), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	f = newFetcher(t, WithRemote(reg.remote()), WithCacheDir(cache), WithLogger(logs.logger()))
	m, err := f.Load(ctx, r)
	if err != nil {
		t.Fatalf("Load with a corrupt cache index: %v", err)
	}
	if !bytes.Equal(m.Bytes, module) {
		t.Fatal("the module pulled differs from the one pushed")
	}
	if !strings.Contains(logs.String(), "policy cache index is corrupt") {
		t.Fatalf("the corrupt index is not logged:\n%s", logs.String())
	}
	aside, _ := filepath.Glob(index + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("set-aside indexes = %v, want one", aside)
	}
}
