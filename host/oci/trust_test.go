package oci

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/nriwasm/nriwasm/host/oci/ref"
	"github.com/nriwasm/nriwasm/host/oci/signature"
	"github.com/nriwasm/nriwasm/internal/builtintest"
)

// TestWithdrawnSignatureStaysWithdrawnOffline deletes a loaded module's
// signature at the registry: online enforce refuses it, and afterwards, with
// the registry unreachable, the cache does not load it either (by tag or by
// digest), nor keeps it.
func TestWithdrawnSignatureStaysWithdrawnOffline(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t)
	owner := newKey(t)
	r := reg.ref(t, "policies/p:v1")
	digest := push(t, reg.remote(), r, builtintest.Module(t, "conformance"))
	sign(t, reg.remote(), r, owner.signer(t))
	cache := t.TempDir()
	var logs logBuffer
	o := []Option{WithRemote(reg.remote()), WithCacheDir(cache), WithVerification(signature.Enforce, owner.verifier(t)), WithTimeout(timeoutShort), WithLogger(logs.logger())}
	m, err := newFetcher(t, o...).Load(ctx, r)
	if err != nil {
		t.Fatal(err)
	}

	repo, err := reg.remote().Open(ctx, r, false)
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := signature.Referrers(ctx, repo, m.Manifest)
	if err != nil || len(sigs) != 1 {
		t.Fatalf("signatures at the registry: %v, %v; want one", sigs, err)
	}
	deleter, ok := repo.(interface {
		Delete(context.Context, ocispec.Descriptor) error
	})
	if !ok {
		t.Fatalf("%T cannot delete", repo)
	}
	if err := deleter.Delete(ctx, sigs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := newFetcher(t, o...).Load(ctx, r); !errors.Is(err, signature.ErrUnsigned) {
		t.Fatalf("online Load after the withdrawal = %v, want ErrUnsigned", err)
	}
	if !strings.Contains(logs.String(), `msg="refused policy digest removed from the cache" digest=`+digest) {
		t.Fatalf("the refused digest is not removed from the cache:\n%s", logs.String())
	}
	if _, err := os.Stat(blobPath(cache, m.Layer.Digest.String())); !os.IsNotExist(err) {
		t.Fatalf("the refused module is still cached (%v)", err)
	}

	o = append(o, WithRemote(reg.down()))
	byDigest := r.WithDigest(m.Digest)
	byDigest.Tag = ""
	for _, offline := range []struct {
		name string
		r    ref.Reference
	}{{"tag", r}, {"digest", byDigest}} {
		if m, err := newFetcher(t, o...).Load(ctx, offline.r); err == nil {
			t.Fatalf("offline Load by %s after the withdrawal loaded %s (offline=%v, key %q), want a refusal", offline.name, m.Digest, m.Offline, m.KeyHint)
		}
	}
}

// corruptBlob serves the blob with digest *target with one byte flipped.
func corruptBlob(target *atomic.Value) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			d, _ := target.Load().(string)
			if d == "" || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/blobs/"+d) {
				next.ServeHTTP(w, req)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, req)
			body := rec.Body.Bytes()
			if len(body) > 0 {
				body[len(body)/2] ^= 0xff
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(body)
		})
	}
}

// TestCorruptBlobIsAnIntegrityFailure has the registry answer a new digest's
// module layer with altered content: the load fails naming the blob, and
// does not fall back to the cached previous digest as if the registry were
// unreachable.
func TestCorruptBlobIsAnIntegrityFailure(t *testing.T) {
	ctx := context.Background()
	var target atomic.Value
	reg := newRegistry(t, corruptBlob(&target))
	r := reg.ref(t, "policies/p:stable")
	first := push(t, reg.remote(), r, builtintest.Module(t, "conformance"))
	var logs logBuffer
	o := []Option{WithRemote(reg.remote()), WithCacheDir(t.TempDir()), WithLogger(logs.logger())}
	if _, err := newFetcher(t, o...).Load(ctx, r); err != nil {
		t.Fatal(err)
	}
	next := builtintest.Module(t, "topology-aware")
	push(t, reg.remote(), r, next)
	layer := content.NewDescriptorFromBytes(LayerMediaType, next).Digest.String()
	target.Store(layer)
	m, err := newFetcher(t, o...).Load(ctx, r)
	if err == nil {
		t.Fatalf("Load loaded %s (offline=%v), want an integrity failure (the cache held %s)", m.Digest, m.Offline, first)
	}
	if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "blob "+layer) {
		t.Fatalf("Load = %v, want ErrIntegrity naming blob %s", err, layer)
	}
	if strings.Contains(logs.String(), "registry unreachable") {
		t.Fatalf("the integrity failure is logged as an unreachable registry:\n%s", logs.String())
	}
}

// TestDigestPinnedReferenceOffline loads a module by tag, then by its digest
// with the registry unreachable: the cache serves it.
func TestDigestPinnedReferenceOffline(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t)
	module := builtintest.Module(t, "conformance")
	r := reg.ref(t, "policies/p:v1")
	push(t, reg.remote(), r, module)
	owner := newKey(t)
	sign(t, reg.remote(), r, owner.signer(t))
	o := []Option{WithRemote(reg.remote()), WithCacheDir(t.TempDir()), WithVerification(signature.Enforce, owner.verifier(t)), WithTimeout(timeoutShort)}
	m, err := newFetcher(t, o...).Load(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	pinned := r.WithDigest(m.Digest)
	pinned.Tag = ""
	o = append(o, WithRemote(reg.down()))
	got, err := newFetcher(t, o...).Load(ctx, pinned)
	if err != nil {
		t.Fatalf("offline Load of %s = %v, want the cached digest", pinned, err)
	}
	if !got.Offline || got.Digest != m.Digest || !bytes.Equal(got.Bytes, module) || got.KeyHint == "" {
		t.Fatalf("offline Load = %s offline=%v key %q, want %s from the cache, verified", got.Digest, got.Offline, got.KeyHint, m.Digest)
	}
	// Another repository's digest is not this one's.
	other := reg.ref(t, "policies/other:v1").WithDigest(m.Digest)
	other.Tag = ""
	if _, err := newFetcher(t, o...).Load(ctx, other); err == nil {
		t.Fatalf("offline Load of %s loaded a digest only policies/p served", other)
	}
}
