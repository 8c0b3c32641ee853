package signature

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// cosign's classic signatures, the default of many cosign 2.x setups: a
// manifest tagged sha256-<hex>.sig in the signed manifest's repository, whose
// layers are simple-signing payloads naming the signed digest, each with its
// signature (base64) in an annotation.
const (
	// SimpleSigningMediaType is a classic signature's layer.
	SimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// AnnotationClassicSignature holds a layer's base64 signature over the
	// layer's bytes.
	AnnotationClassicSignature = "dev.cosignproject.cosign/signature"
	// ClassicSignatureType is the simple-signing payload's critical.type.
	ClassicSignatureType = "cosign container image signature"
	// maxPayloadSize bounds a simple-signing payload.
	maxPayloadSize = 1 << 20
	// maxClassicLayers bounds the signatures read from one classic manifest.
	maxClassicLayers = 64
)

// ClassicTag is the tag cosign gives the classic signatures of manifest d.
func ClassicTag(d digest.Digest) string {
	return d.Algorithm().String() + "-" + d.Encoded() + ".sig"
}

// simpleSigning is the payload a classic signature signs.
type simpleSigning struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
}

// verifyClassic checks the classic signature manifest sig: the first layer
// whose signature a trusted key made over a payload naming subject wins.
func (v *Verifier) verifyClassic(ctx context.Context, store content.ReadOnlyStorage, sig ocispec.Descriptor, subject digest.Digest) (*Result, error) {
	data, err := fetch(ctx, store, sig, 4<<20)
	if err != nil {
		return nil, err
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(data, &man); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	if len(man.Layers) > maxClassicLayers {
		return nil, fmt.Errorf("%d layers, over the limit of %d", len(man.Layers), maxClassicLayers)
	}
	var errs []error
	for i, l := range man.Layers {
		if l.MediaType != SimpleSigningMediaType {
			continue
		}
		hint, err := v.verifyPayload(ctx, store, l, subject)
		if err == nil {
			return &Result{KeyHint: hint, Signature: sig}, nil
		}
		errs = append(errs, fmt.Errorf("layer %d (%s): %w", i, l.Digest, err))
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("no layer of type %s", SimpleSigningMediaType)
	}
	return nil, errors.Join(errs...)
}

// verifyPayload checks one simple-signing layer and returns the hint of the
// key that made its signature.
func (v *Verifier) verifyPayload(ctx context.Context, store content.ReadOnlyStorage, l ocispec.Descriptor, subject digest.Digest) (string, error) {
	b64, ok := l.Annotations[AnnotationClassicSignature]
	if !ok {
		return "", fmt.Errorf("no %s annotation", AnnotationClassicSignature)
	}
	sig, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", fmt.Errorf("annotation %s: %w", AnnotationClassicSignature, err)
	}
	payload, err := fetch(ctx, store, l, maxPayloadSize)
	if err != nil {
		return "", err
	}
	hint := ""
	for i, kv := range v.keys {
		if kv.VerifySignature(bytes.NewReader(sig), bytes.NewReader(payload)) == nil {
			hint = v.hints[i]
			break
		}
	}
	if hint == "" {
		return "", fmt.Errorf("%w by the trusted keys %v", ErrMismatch, v.hints)
	}
	// Only a payload a trusted key signed is worth reading.
	var p simpleSigning
	if err := json.Unmarshal(payload, &p); err != nil {
		return "", fmt.Errorf("decode simple-signing payload: %w", err)
	}
	if p.Critical.Type != ClassicSignatureType {
		return "", fmt.Errorf("payload critical.type %q, want %q", p.Critical.Type, ClassicSignatureType)
	}
	if p.Critical.Image.DockerManifestDigest != subject.String() {
		return "", fmt.Errorf("payload signs %q, not %s", p.Critical.Image.DockerManifestDigest, subject)
	}
	return hint, nil
}
