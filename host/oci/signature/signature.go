// Package signature signs policy artifacts and verifies their signatures with
// sigstore-go, offline and key-based: a signature is a Sigstore bundle (the
// format cosign writes) holding a DSSE envelope over an in-toto statement whose
// subject is the policy manifest's digest. It is stored in the repository as an
// OCI referrer of that manifest (artifact type
// application/vnd.dev.sigstore.bundle.v0.3+json), so it travels with the
// policy through registries, layouts and the agent's cache.
//
// No Fulcio certificate, Rekor entry or timestamp is made or required: the
// trust is the public keys the verifier is given. See RATIONALE.md in
// host/oci.
package signature

import (
	"errors"
	"fmt"
)

// Media types and annotations of a signature referrer.
const (
	// BundleMediaType is the artifact type of the referrer and the media type
	// of its one layer, the bundle's JSON.
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// PredicateType is the in-toto predicate cosign uses for a plain signature.
	PredicateType = "https://sigstore.dev/cosign/sign/v1"
	// AnnotationPredicateType and AnnotationContent describe the bundle on the
	// referrer's manifest, as cosign does.
	AnnotationPredicateType = "dev.sigstore.bundle.predicateType"
	AnnotationContent       = "dev.sigstore.bundle.content"

	inTotoPayloadType = "application/vnd.in-toto+json"
	inTotoStatement   = "https://in-toto.io/Statement/v1"
	// maxBundleSize bounds a bundle read from a registry.
	maxBundleSize = 1 << 20
)

// Mode is what a failed verification does.
type Mode string

const (
	// Off skips verification.
	Off Mode = "off"
	// Warn logs a module that is unsigned or whose signatures do not verify,
	// and runs it.
	Warn Mode = "warn"
	// Enforce refuses such a module.
	Enforce Mode = "enforce"
)

// ParseMode reads "off", "warn" or "enforce".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Off, Warn, Enforce:
		return m, nil
	}
	return "", fmt.Errorf("verification mode %q: want %q, %q or %q", s, Off, Warn, Enforce)
}

var (
	// ErrUnsigned is a module with no signature referrer.
	ErrUnsigned = errors.New("no signature")
	// ErrMismatch is a module whose signatures all fail: made by another key,
	// over another digest, or altered.
	ErrMismatch = errors.New("no signature verifies")
)
