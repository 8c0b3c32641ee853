package signature

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"fmt"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
)

// Signer signs policy manifests with one private key.
type Signer struct {
	kp *keypair
}

// NewSigner signs with key (see ParsePrivateKey).
func NewSigner(key crypto.Signer) (*Signer, error) {
	kp, err := newKeypair(key)
	if err != nil {
		return nil, err
	}
	return &Signer{kp: kp}, nil
}

// KeyHint names the signer's key, as its bundles do.
func (s *Signer) KeyHint() string { return s.kp.hint }

// statement is the in-toto statement a signature covers.
type statement struct {
	Type          string          `json:"_type"`
	Subject       []subject       `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Bundle signs the manifest m (named name in the statement, e.g. the
// repository) and returns the bundle's JSON.
func (s *Signer) Bundle(ctx context.Context, name string, m ocispec.Descriptor) ([]byte, error) {
	if m.Digest.Algorithm() != digest.SHA256 {
		return nil, fmt.Errorf("sign %s: only sha256 manifests are signed", m.Digest)
	}
	st, err := json.Marshal(statement{
		Type:          inTotoStatement,
		Subject:       []subject{{Name: name, Digest: map[string]string{"sha256": m.Digest.Encoded()}}},
		PredicateType: PredicateType,
		Predicate:     json.RawMessage("{}"),
	})
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", m.Digest, err)
	}
	b, err := sign.Bundle(&sign.DSSEData{Data: st, PayloadType: inTotoPayloadType}, s.kp, sign.BundleOptions{Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", m.Digest, err)
	}
	data, err := protojson.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("sign %s: encode bundle: %w", m.Digest, err)
	}
	return data, nil
}

// Attach signs the manifest m and pushes the bundle to target as a referrer of
// m. It returns the referrer's manifest.
func (s *Signer) Attach(ctx context.Context, target oras.Target, name string, m ocispec.Descriptor) (ocispec.Descriptor, error) {
	data, err := s.Bundle(ctx, name, m)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	layer := content.NewDescriptorFromBytes(BundleMediaType, data)
	if err := target.Push(ctx, layer, bytes.NewReader(data)); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("push signature bundle: %w", err)
	}
	desc, err := oras.PackManifest(ctx, target, oras.PackManifestVersion1_1, BundleMediaType, oras.PackManifestOptions{
		Subject: &m,
		Layers:  []ocispec.Descriptor{layer},
		ManifestAnnotations: map[string]string{
			AnnotationPredicateType: PredicateType,
			AnnotationContent:       "dsse-envelope",
		},
	})
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("push signature manifest: %w", err)
	}
	return desc, nil
}
