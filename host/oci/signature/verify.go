package signature

import (
	"context"
	"crypto"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
)

// Verifier checks a manifest's signatures against trusted public keys.
type Verifier struct {
	v     *verify.Verifier
	hints []string
	// keys verify classic signatures; keys[i] is hints[i].
	keys []sigsig.Verifier
}

// NewVerifier trusts keys (see ParsePublicKey); it needs at least one.
func NewVerifier(keys ...crypto.PublicKey) (*Verifier, error) {
	if len(keys) == 0 {
		return nil, errors.New("signature verifier: no public key")
	}
	trusted := map[string]*root.ExpiringKey{}
	var hints []string
	var svs []sigsig.Verifier
	for _, pub := range keys {
		alg, err := algorithm(pub)
		if err != nil {
			return nil, err
		}
		sv, err := sigsig.LoadVerifier(pub, alg.GetHashType())
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		hint, err := KeyHint(pub)
		if err != nil {
			return nil, err
		}
		trusted[hint] = root.NewExpiringKey(sv, time.Time{}, time.Time{})
		hints = append(hints, hint)
		svs = append(svs, sv)
	}
	v, err := verify.NewVerifier(root.NewTrustedPublicKeyMaterialFromMapping(trusted), verify.WithNoObserverTimestamps())
	if err != nil {
		return nil, fmt.Errorf("signature verifier: %w", err)
	}
	return &Verifier{v: v, hints: hints, keys: svs}, nil
}

// Result is a verified signature.
type Result struct {
	// KeyHint names the key that made it (see KeyHint).
	KeyHint string
	// Signature is the referrer's manifest.
	Signature ocispec.Descriptor
}

// Referrers lists the referrers of m in store (a registry, a layout or the
// cache) that may be signatures. Registries that predate OCI 1.1 report a
// referrer's config media type as its artifact type, so referrers with the
// empty config's type are kept too; Verify reads each manifest's own
// artifactType.
func Referrers(ctx context.Context, store content.ReadOnlyGraphStorage, m ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	all, err := registry.Referrers(ctx, store, m, "")
	if err != nil {
		return nil, fmt.Errorf("list signatures of %s: %w", m.Digest, err)
	}
	var refs []ocispec.Descriptor
	for _, r := range all {
		switch r.ArtifactType {
		case BundleMediaType, ocispec.MediaTypeEmptyJSON, "":
			refs = append(refs, r)
		}
	}
	return refs, nil
}

// Verify finds m's signature referrers in store and returns the first that a
// trusted key made over m's digest; classic are cosign's classic signature
// manifests of m (the manifest tagged ClassicTag(m.Digest), found by the
// caller), also accepted. It fails with ErrUnsigned when there is no
// signature, and with ErrMismatch (joined with each signature's reason) when
// none verifies.
func (v *Verifier) Verify(ctx context.Context, store content.ReadOnlyGraphStorage, m ocispec.Descriptor, classic ...ocispec.Descriptor) (*Result, error) {
	refs, err := Referrers(ctx, store, m)
	if err != nil {
		return nil, err
	}
	errs := []error{fmt.Errorf("%s: %w by the trusted keys %v", m.Digest, ErrMismatch, v.hints)}
	for _, ref := range refs {
		res, err := v.verifyOne(ctx, store, ref, m.Digest)
		if errors.Is(err, errNotSignature) {
			continue
		}
		if err == nil {
			return res, nil
		}
		errs = append(errs, fmt.Errorf("signature %s: %w", ref.Digest, err))
	}
	for _, c := range classic {
		res, err := v.verifyClassic(ctx, store, c, m.Digest)
		if err == nil {
			return res, nil
		}
		errs = append(errs, fmt.Errorf("classic signature %s (tag %s): %w", c.Digest, ClassicTag(m.Digest), err))
	}
	if len(errs) == 1 {
		return nil, fmt.Errorf("%s: %w (no referrer of type %s, no classic signature tagged %s)", m.Digest, ErrUnsigned, BundleMediaType, ClassicTag(m.Digest))
	}
	return nil, errors.Join(errs...)
}

// errNotSignature is a referrer of another artifact type.
var errNotSignature = errors.New("not a signature")

func (v *Verifier) verifyOne(ctx context.Context, store content.ReadOnlyStorage, ref ocispec.Descriptor, subject digest.Digest) (*Result, error) {
	data, err := fetch(ctx, store, ref, 4<<20)
	if err != nil {
		return nil, err
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(data, &man); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	if man.ArtifactType != BundleMediaType {
		return nil, errNotSignature
	}
	if len(man.Layers) != 1 || man.Layers[0].MediaType != BundleMediaType {
		return nil, fmt.Errorf("want one layer of type %s", BundleMediaType)
	}
	data, err = fetch(ctx, store, man.Layers[0], maxBundleSize)
	if err != nil {
		return nil, err
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("decode bundle: %w", err)
	}
	raw, err := hexDigest(subject)
	if err != nil {
		return nil, err
	}
	if _, err := v.v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest(string(subject.Algorithm()), raw), verify.WithKey())); err != nil {
		return nil, err
	}
	hint := ""
	if pk := b.GetVerificationMaterial().GetPublicKey(); pk != nil {
		hint = pk.GetHint()
	}
	return &Result{KeyHint: hint, Signature: ref}, nil
}

// fetch reads a blob whose size is at most limit, checking its digest.
func fetch(ctx context.Context, store content.ReadOnlyStorage, d ocispec.Descriptor, limit int64) ([]byte, error) {
	if d.Size > limit {
		return nil, fmt.Errorf("%s is %d bytes, over the limit of %d", d.Digest, d.Size, limit)
	}
	rc, err := store.Fetch(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", d.Digest, err)
	}
	defer rc.Close()
	data, err := content.ReadAll(rc, d)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", d.Digest, err)
	}
	return data, nil
}

func hexDigest(d digest.Digest) ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(d.Encoded())
	if err != nil {
		return nil, fmt.Errorf("digest %s: %w", d, err)
	}
	return raw, nil
}
