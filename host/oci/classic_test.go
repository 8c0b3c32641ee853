package oci

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/nriwasm/nriwasm/host/oci/ref"
	"github.com/nriwasm/nriwasm/host/oci/signature"
	"github.com/nriwasm/nriwasm/internal/builtintest"
)

// signClassic signs the manifest r resolves to as cosign 2.x does by default
// (its classic format): a simple-signing payload naming the digest, signed
// with key (ECDSA over the payload's SHA-256) and pushed as the layer of a
// manifest tagged sha256-<hex>.sig, the signature in the layer's annotation.
// signs is the digest the payload names.
func signClassic(t testing.TB, rem Remote, r ref.Reference, key *ecdsa.PrivateKey, signs digest.Digest) {
	t.Helper()
	ctx := context.Background()
	target, err := rem.Open(ctx, r, false)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := target.Resolve(ctx, r.Object())
	if err != nil {
		t.Fatal(err)
	}
	if signs == "" {
		signs = desc.Digest
	}
	payload, err := json.Marshal(map[string]any{
		"critical": map[string]any{
			"identity": map[string]string{"docker-reference": r.Name()},
			"image":    map[string]string{"docker-manifest-digest": signs.String()},
			"type":     signature.ClassicSignatureType,
		},
		"optional": nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	layer := ocispec.Descriptor{
		MediaType:   signature.SimpleSigningMediaType,
		Digest:      digest.FromBytes(payload),
		Size:        int64(len(payload)),
		Annotations: map[string]string{signature.AnnotationClassicSignature: base64.StdEncoding.EncodeToString(sig)},
	}
	if err := pushIfMissing(ctx, target, layer, payload); err != nil {
		t.Fatal(err)
	}
	man, err := oras.PackManifest(ctx, target, oras.PackManifestVersion1_0, ocispec.MediaTypeImageConfig, oras.PackManifestOptions{
		Layers: []ocispec.Descriptor{layer},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := target.Tag(ctx, man, signature.ClassicTag(desc.Digest)); err != nil {
		t.Fatal(err)
	}
}

func TestClassicCosignSignature(t *testing.T) {
	ctx := context.Background()
	module := builtintest.Module(t, "conformance")
	reg := newRegistry(t)
	owner, stranger := newKey(t), newKey(t)
	signed := reg.ref(t, "policies/classic:v1")
	push(t, reg.remote(), signed, module)
	signClassic(t, reg.remote(), signed, owner.priv, "")
	foreign := reg.ref(t, "policies/foreign:v1")
	push(t, reg.remote(), foreign, module)
	signClassic(t, reg.remote(), foreign, stranger.priv, "")
	other := reg.ref(t, "policies/other:v1")
	push(t, reg.remote(), other, builtintest.Module(t, "topology-aware"))
	elsewhere := reg.ref(t, "policies/elsewhere:v1")
	push(t, reg.remote(), elsewhere, module)
	// A valid signature of another digest, under this digest's tag.
	signClassic(t, reg.remote(), elsewhere, owner.priv, digest.FromString("another manifest"))

	o := []Option{WithRemote(reg.remote()), WithVerification(signature.Enforce, owner.verifier(t)), WithTimeout(timeoutShort)}
	t.Run("signed by a trusted key", func(t *testing.T) {
		o := o
		o = append(o, WithCacheDir(t.TempDir()))
		m, err := newFetcher(t, o...).Load(ctx, signed)
		if err != nil {
			t.Fatal(err)
		}
		if m.KeyHint != owner.signer(t).KeyHint() {
			t.Fatalf("verified by %q, want %q", m.KeyHint, owner.signer(t).KeyHint())
		}
		// Offline, the cache holds the classic signature too.
		o = append(o, WithRemote(reg.down()))
		m, err = newFetcher(t, o...).Load(ctx, signed)
		if err != nil || !m.Offline || m.KeyHint == "" {
			t.Fatalf("offline Load = %+v, %v; want the cached module, verified", m, err)
		}
		// Withdrawn at the registry: refused online, then offline too.
		repo, err := reg.remote().Open(ctx, signed, false)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := repo.Resolve(ctx, signature.ClassicTag(m.Digest))
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.(interface {
			Delete(context.Context, ocispec.Descriptor) error
		}).Delete(ctx, sig); err != nil {
			t.Fatal(err)
		}
		o = append(o, WithRemote(reg.remote()))
		// (The in-process registry keeps the tag of a deleted manifest, so
		// the signature is "not found" rather than absent.)
		if _, err := newFetcher(t, o...).Load(ctx, signed); err == nil || !strings.Contains(err.Error(), "refused by signature verification") {
			t.Fatalf("online Load after the withdrawal = %v, want a refusal", err)
		}
		o = append(o, WithRemote(reg.down()))
		if m, err := newFetcher(t, o...).Load(ctx, signed); err == nil {
			t.Fatalf("offline Load after the withdrawal loaded %s (key %q), want a refusal", m.Digest, m.KeyHint)
		}
	})
	for name, tc := range map[string]struct {
		r    ref.Reference
		want string
	}{
		"signed by another key":       {foreign, "classic signature"},
		"signature of another digest": {elsewhere, "payload signs"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := newFetcher(t, o...).Load(ctx, tc.r)
			if !errors.Is(err, signature.ErrMismatch) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v, want ErrMismatch naming %q", err, tc.want)
			}
		})
	}
	t.Run("unsigned names the classic tag it looked for", func(t *testing.T) {
		_, err := newFetcher(t, o...).Load(ctx, other)
		if !errors.Is(err, signature.ErrUnsigned) || !strings.Contains(err.Error(), "no classic signature tagged sha256-") {
			t.Fatalf("Load = %v, want ErrUnsigned naming the classic tag", err)
		}
	})
}
