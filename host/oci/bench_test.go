package oci

import (
	"context"
	"testing"

	"github.com/nriwasm/nriwasm/internal/builtintest"
)

// BenchmarkLoad measures a load of the 9 MB conformance module whose blobs
// the cache holds: resolving the tag at the registry, then reading and
// digest-checking the module from the cache ("online"), or the cache alone
// when the registry is down ("offline").
func BenchmarkLoad(b *testing.B) {
	t := b
	reg := newRegistry(t)
	r := reg.ref(t, "policies/conformance:v1")
	module := builtintest.Module(t, "conformance")
	push(t, reg.remote(), r, module)
	cache := b.TempDir()
	online := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(cache))
	ctx := context.Background()
	if _, err := online.Load(ctx, r); err != nil {
		b.Fatal(err)
	}
	offline := newFetcher(t, WithRemote(reg.down()), WithCacheDir(cache))
	for _, bc := range []struct {
		name string
		f    *Fetcher
	}{{"online", online}, {"offline", offline}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(module)))
			for b.Loop() {
				if _, err := bc.f.Load(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
