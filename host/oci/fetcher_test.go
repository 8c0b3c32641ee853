package oci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/oci/ref"
	"github.com/nriwasm/nriwasm/host/oci/signature"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/internal/builtintest"
)

// TestPushPullLoadRun pushes a built-in policy to a registry and to an OCI
// layout, loads it back through the cache, and runs a call on it.
func TestPushPullLoadRun(t *testing.T) {
	module := builtintest.Module(t, "conformance")
	reg := newRegistry(t)
	for _, tc := range []struct {
		name string
		rem  Remote
		r    ref.Reference
	}{
		{"registry", reg.remote(), reg.ref(t, "policies/conformance:1.0.0")},
		{"layout", Remote{}, mustParse(t, "oci-layout://"+filepath.Join(t.TempDir(), "layout")+":1.0.0")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			pushed := push(t, tc.rem, tc.r, module)
			if again := push(t, tc.rem, tc.r, module); again != pushed {
				t.Fatalf("pushing the same module twice gave %s then %s", pushed, again)
			}
			var logs logBuffer
			f := newFetcher(t, WithRemote(tc.rem), WithCacheDir(t.TempDir()), WithLogger(logs.logger()))
			m, err := f.Load(ctx, tc.r)
			if err != nil {
				t.Fatal(err)
			}
			if m.Digest.String() != pushed || !bytes.Equal(m.Bytes, module) || m.Offline {
				t.Fatalf("loaded %s (%d bytes, offline %v), want %s (%d bytes)", m.Digest, len(m.Bytes), m.Offline, pushed, len(module))
			}
			if !strings.Contains(logs.String(), `msg="policy reference resolved" reference=`+tc.r.String()+" digest="+pushed) {
				t.Fatalf("the tag's resolution is not logged with its digest:\n%s", logs.String())
			}
			for k, want := range map[string]string{AnnotationPolicyName: "conformance", AnnotationVersion: "1.0.0", AnnotationABIVersion: fmt.Sprintf("%d.%d", abi.ABIMajor, abi.ABIMinor)} {
				if got := m.Annotations[k]; got != want {
					t.Errorf("annotation %s = %q, want %q", k, got, want)
				}
			}
			if m.Layer.MediaType != LayerMediaType {
				t.Errorf("layer media type %q, want %q", m.Layer.MediaType, LayerMediaType)
			}
			p, err := wasm.Load(ctx, m.Name, m.Bytes, wasm.WithCacheDir(compileCache))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			info, err := abi.NewClient(p).Info(ctx, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor})
			if err != nil {
				t.Fatal(err)
			}
			if got := info.GetMetadata().GetName(); got != "conformance" {
				t.Fatalf("Info answered policy %q, want conformance", got)
			}
			// The same manifest by digest, from the cache's point of view a
			// different reference.
			byDigest := tc.r.WithDigest(m.Digest)
			byDigest.Tag = ""
			if m2, err := f.Load(ctx, byDigest); err != nil || m2.Digest != m.Digest {
				t.Fatalf("load by digest: %v, %v", m2, err)
			}
		})
	}
}

func TestPushRefusesAnUnsealedModule(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "wasm", "testdata", "rawguest.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	r := mustParse(t, "oci-layout://"+t.TempDir()+":v1")
	target, err := Remote{}.Open(context.Background(), r, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Push(context.Background(), target, "v1", raw); err == nil || !strings.Contains(err.Error(), "nriwasm policy seal") {
		t.Fatalf("Push of an unsealed module = %v, want a request to seal it", err)
	}
}

// blobPath is where the cache keeps a blob.
func blobPath(cacheDir string, digest string) string {
	alg, hex, _ := strings.Cut(digest, ":")
	return filepath.Join(cacheDir, "blobs", alg, hex)
}

func TestTamperedCacheBlobIsRemovedAndPulledAgain(t *testing.T) {
	ctx := context.Background()
	module := builtintest.Module(t, "conformance")
	reg := newRegistry(t)
	r := reg.ref(t, "policies/conformance:v1")
	push(t, reg.remote(), r, module)
	cache := t.TempDir()
	var logs logBuffer
	f := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(cache), WithLogger(logs.logger()))
	m, err := f.Load(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	tamper := func() {
		t.Helper()
		path := blobPath(cache, m.Layer.Digest.String())
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0xff
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tamper()
	// A restarted agent: a new fetcher on the same cache.
	f = newFetcher(t, WithRemote(reg.remote()), WithCacheDir(cache), WithLogger(logs.logger()))
	m2, err := f.Load(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m2.Bytes, module) {
		t.Fatal("the module pulled again differs from the one pushed")
	}
	if !strings.Contains(logs.String(), "cached policy does not match its digest; removing it") {
		t.Fatalf("the tampered blob is not logged:\n%s", logs.String())
	}
	// Offline, a tampered cache is refused: nothing to pull it again from.
	tamper()
	reg.srv.Close()
	f = newFetcher(t, WithRemote(reg.remote()), WithCacheDir(cache), WithTimeout(timeoutShort))
	if _, err := f.Load(ctx, r); err == nil || !strings.Contains(err.Error(), "mismatch") {
		t.Fatalf("offline load of a tampered cache = %v, want a digest mismatch", err)
	}
}

func TestRegistryDown(t *testing.T) {
	ctx := context.Background()
	module := builtintest.Module(t, "conformance")
	reg := newRegistry(t)
	r := reg.ref(t, "policies/conformance:v1")
	digest := push(t, reg.remote(), r, module)
	warm := t.TempDir()
	if _, err := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(warm)).Load(ctx, r); err != nil {
		t.Fatal(err)
	}
	reg.srv.Close()

	t.Run("without a cached copy", func(t *testing.T) {
		f := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(t.TempDir()), WithTimeout(timeoutShort))
		if _, err := f.Load(ctx, r); err == nil || !strings.Contains(err.Error(), "cannot pull from the registry and no cached copy") {
			t.Fatalf("Load = %v, want an unreachable registry and no cached copy", err)
		}
	})
	t.Run("with a cached copy", func(t *testing.T) {
		var logs logBuffer
		f := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(warm), WithTimeout(timeoutShort), WithLogger(logs.logger()))
		m, err := f.Load(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if !m.Offline || m.Digest.String() != digest || !bytes.Equal(m.Bytes, module) {
			t.Fatalf("loaded %s offline=%v, want %s from the cache", m.Digest, m.Offline, digest)
		}
		if !strings.Contains(logs.String(), "registry unreachable; loading the cached copy") {
			t.Fatalf("the fallback is not logged:\n%s", logs.String())
		}
	})
}

func TestNotFoundIsNotAFallback(t *testing.T) {
	reg := newRegistry(t)
	r := reg.ref(t, "policies/conformance:v1")
	push(t, reg.remote(), r, builtintest.Module(t, "conformance"))
	cache := t.TempDir()
	if _, err := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(cache)).Load(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	gone := reg.ref(t, "policies/conformance:v2")
	if _, err := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(cache)).Load(context.Background(), gone); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("Load of a missing tag = %v, want not found", err)
	}
}

func TestSignatureModes(t *testing.T) {
	ctx := context.Background()
	module := builtintest.Module(t, "conformance")
	reg := newRegistry(t)
	owner, stranger := newKey(t), newKey(t)
	unsigned := reg.ref(t, "policies/unsigned:v1")
	push(t, reg.remote(), unsigned, module)
	signed := reg.ref(t, "policies/signed:v1")
	push(t, reg.remote(), signed, module)
	sign(t, reg.remote(), signed, owner.signer(t))
	foreign := reg.ref(t, "policies/foreign:v1")
	push(t, reg.remote(), foreign, module)
	sign(t, reg.remote(), foreign, stranger.signer(t))

	enforce := func() *Fetcher {
		return newFetcher(t, WithRemote(reg.remote()), WithCacheDir(t.TempDir()), WithVerification(signature.Enforce, owner.verifier(t)))
	}
	t.Run("unsigned under enforce", func(t *testing.T) {
		_, err := enforce().Load(ctx, unsigned)
		if !errors.Is(err, signature.ErrUnsigned) || !strings.Contains(err.Error(), "refused by signature verification (mode enforce)") {
			t.Fatalf("Load = %v, want a refusal for no signature", err)
		}
	})
	t.Run("signed under enforce", func(t *testing.T) {
		m, err := enforce().Load(ctx, signed)
		if err != nil {
			t.Fatal(err)
		}
		if m.KeyHint != owner.signer(t).KeyHint() {
			t.Fatalf("verified by %q, want %q", m.KeyHint, owner.signer(t).KeyHint())
		}
	})
	t.Run("signed by another key under enforce", func(t *testing.T) {
		if _, err := enforce().Load(ctx, foreign); !errors.Is(err, signature.ErrMismatch) {
			t.Fatalf("Load = %v, want ErrMismatch", err)
		}
	})
	t.Run("signed in another repository, unsigned in this one", func(t *testing.T) {
		// The same module, so the same digest: the cache holds its signature
		// from the signed repository, but online only this one's count.
		f := enforce()
		if _, err := f.Load(ctx, signed); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Load(ctx, unsigned); !errors.Is(err, signature.ErrUnsigned) {
			t.Fatalf("Load = %v, want ErrUnsigned", err)
		}
	})
	t.Run("unsigned under warn", func(t *testing.T) {
		var logs logBuffer
		f := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(t.TempDir()), WithVerification(signature.Warn, owner.verifier(t)), WithLogger(logs.logger()))
		m, err := f.Load(ctx, unsigned)
		if err != nil || m.KeyHint != "" {
			t.Fatalf("Load = %v, %v; want the module, unverified", m, err)
		}
		if !strings.Contains(logs.String(), "loading it anyway (verification mode warn)") {
			t.Fatalf("the failed verification is not logged:\n%s", logs.String())
		}
	})
	t.Run("signed under enforce, offline from the cache", func(t *testing.T) {
		cache := t.TempDir()
		o := []Option{WithRemote(reg.remote()), WithCacheDir(cache), WithVerification(signature.Enforce, owner.verifier(t)), WithTimeout(timeoutShort)}
		if _, err := newFetcher(t, o...).Load(ctx, signed); err != nil {
			t.Fatal(err)
		}
		o = append(o, WithRemote(reg.down()))
		m, err := newFetcher(t, o...).Load(ctx, signed)
		if err != nil || !m.Offline || m.KeyHint == "" {
			t.Fatalf("offline Load = %+v, %v; want the cached module, verified", m, err)
		}
	})
}

// TestEnforceKeepsTheLastVerifiedDigest moves a signed tag to an unsigned
// module: under enforce the agent keeps the digest it verified before.
func TestEnforceKeepsTheLastVerifiedDigest(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t)
	owner := newKey(t)
	r := reg.ref(t, "policies/p:stable")
	good := push(t, reg.remote(), r, builtintest.Module(t, "conformance"))
	sign(t, reg.remote(), r, owner.signer(t))
	var logs logBuffer
	o := []Option{WithRemote(reg.remote()), WithCacheDir(t.TempDir()), WithVerification(signature.Enforce, owner.verifier(t)), WithLogger(logs.logger())}
	if _, err := newFetcher(t, o...).Load(ctx, r); err != nil {
		t.Fatal(err)
	}
	bad := push(t, reg.remote(), r, builtintest.Module(t, "topology-aware"))
	m, err := newFetcher(t, o...).Load(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if m.Digest.String() != good {
		t.Fatalf("loaded %s, want the verified %s (the tag now points at %s)", m.Digest, good, bad)
	}
	if !strings.Contains(logs.String(), "new digest refused; loading the last verified one") || !strings.Contains(logs.String(), bad) {
		t.Fatalf("the refusal is not logged:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `msg="refused policy digest removed from the cache" digest=`+bad) ||
		strings.Contains(logs.String(), `msg="old policy digest removed from the cache" digest=`+bad) {
		t.Fatalf("the refused digest's removal is not logged as such:\n%s", logs.String())
	}
}

// TestMovedTagPrunesTheCache moves a tag to another module: the cache drops
// the digest no reference uses any more, and keeps one another still uses.
func TestMovedTagPrunesTheCache(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t)
	stable, pinned := reg.ref(t, "policies/p:stable"), reg.ref(t, "policies/p:1.0")
	first := push(t, reg.remote(), stable, builtintest.Module(t, "conformance"))
	cache := t.TempDir()
	f := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(cache))
	m1, err := f.Load(ctx, stable)
	if err != nil {
		t.Fatal(err)
	}
	push(t, reg.remote(), stable, builtintest.Module(t, "topology-aware"))
	if _, err := f.Load(ctx, stable); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(blobPath(cache, m1.Layer.Digest.String())); !os.IsNotExist(err) {
		t.Fatalf("the old module %s is still cached (%v)", first, err)
	}
	// A digest another reference still uses stays.
	push(t, reg.remote(), pinned, builtintest.Module(t, "conformance"))
	push(t, reg.remote(), stable, builtintest.Module(t, "conformance"))
	for _, r := range []ref.Reference{pinned, stable} {
		if _, err := f.Load(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	push(t, reg.remote(), stable, builtintest.Module(t, "topology-aware"))
	if _, err := f.Load(ctx, stable); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(blobPath(cache, m1.Layer.Digest.String())); err != nil {
		t.Fatalf("the module %s that %s still names was removed: %v", first, pinned, err)
	}
}
