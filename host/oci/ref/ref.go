// Package ref parses policy references that name an OCI artifact: a
// repository in a registry, oci://REGISTRY/REPOSITORY:TAG or
// oci://REGISTRY/REPOSITORY@sha256:DIGEST, or an OCI image layout on disk,
// oci-layout://PATH:TAG or oci-layout://PATH@sha256:DIGEST.
//
// A reference holds a tag, a digest, or both (TAG@DIGEST: the digest is what
// is fetched, the tag is kept for logs). It is kept free of network code so
// that the configuration can validate references cheaply.
package ref

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2/registry"
)

// The schemes of a policy reference.
const (
	// SchemeRegistry names a repository in a registry.
	SchemeRegistry = "oci://"
	// SchemeLayout names an OCI image layout directory on disk.
	SchemeLayout = "oci-layout://"
)

// Reference is a parsed policy reference.
type Reference struct {
	// Registry is host[:port]; empty for a layout.
	Registry string
	// Repository is the repository path in the registry; empty for a layout.
	Repository string
	// Layout is the OCI image layout directory; empty for a registry.
	Layout string
	// Tag is the tag, if one was given.
	Tag string
	// Digest is the manifest's digest, if one was given.
	Digest digest.Digest
}

// IsReference reports whether s is meant as an OCI reference (it has one of
// the schemes), so a caller can tell it from a built-in name or a file.
func IsReference(s string) bool {
	return strings.HasPrefix(s, SchemeRegistry) || strings.HasPrefix(s, SchemeLayout)
}

// ErrInvalid wraps every parse error.
var ErrInvalid = errors.New("invalid OCI reference")

// Parse reads oci://REGISTRY/REPOSITORY(:TAG|@DIGEST|:TAG@DIGEST) or
// oci-layout://PATH(:TAG|@DIGEST|:TAG@DIGEST). A tag or a digest is required:
// a policy is never fetched by an implicit "latest".
func Parse(s string) (Reference, error) {
	fail := func(format string, args ...any) (Reference, error) {
		return Reference{}, fmt.Errorf("%w %q: %s; want %sREGISTRY/REPOSITORY:TAG, %sREGISTRY/REPOSITORY@sha256:DIGEST or %sPATH:TAG",
			ErrInvalid, s, fmt.Sprintf(format, args...), SchemeRegistry, SchemeRegistry, SchemeLayout)
	}
	var r Reference
	rest, layout := strings.CutPrefix(s, SchemeLayout)
	if !layout {
		var ok bool
		if rest, ok = strings.CutPrefix(s, SchemeRegistry); !ok {
			return fail("no %s or %s scheme", SchemeRegistry, SchemeLayout)
		}
	}
	if before, after, ok := strings.Cut(rest, "@"); ok {
		d, err := digest.Parse(after)
		if err != nil {
			return fail("digest %q: %v", after, err)
		}
		r.Digest, rest = d, before
	}
	// A tag follows the last ':' after the last '/' (a registry's port and a
	// layout path's directories come before it).
	if i := strings.LastIndexByte(rest, ':'); i > strings.LastIndexByte(rest, '/') {
		r.Tag, rest = rest[i+1:], rest[:i]
	}
	if r.Tag == "" && r.Digest == "" {
		return fail("no tag or digest")
	}
	if layout {
		if rest == "" {
			return fail("no layout path")
		}
		r.Layout = rest
		if r.Tag != "" {
			if err := (registry.Reference{Reference: r.Tag}).ValidateReferenceAsTag(); err != nil {
				return fail("%v", err)
			}
		}
		return r, nil
	}
	reg, repo, ok := strings.Cut(rest, "/")
	if !ok || repo == "" {
		return fail("no repository after the registry %q", rest)
	}
	r.Registry, r.Repository = reg, repo
	check := registry.Reference{Registry: reg, Repository: repo, Reference: r.Tag}
	if err := check.ValidateRegistry(); err != nil {
		return fail("%v", err)
	}
	if err := check.ValidateRepository(); err != nil {
		return fail("%v", err)
	}
	if r.Tag != "" {
		if err := check.ValidateReferenceAsTag(); err != nil {
			return fail("%v", err)
		}
	}
	return r, nil
}

// IsLayout reports whether r names an OCI layout on disk.
func (r Reference) IsLayout() bool { return r.Layout != "" }

// Object is what to resolve in the repository: the digest if there is one,
// else the tag.
func (r Reference) Object() string {
	if r.Digest != "" {
		return r.Digest.String()
	}
	return r.Tag
}

// WithDigest returns r pinned to d (its tag kept for logs).
func (r Reference) WithDigest(d digest.Digest) Reference {
	r.Digest = d
	return r
}

// Name is where the artifact lives, without tag or digest:
// "registry.example.com/policies/balloons" or the layout path.
func (r Reference) Name() string {
	if r.IsLayout() {
		return r.Layout
	}
	return r.Registry + "/" + r.Repository
}

// String writes the reference back with its scheme.
func (r Reference) String() string {
	s := SchemeRegistry + r.Name()
	if r.IsLayout() {
		s = SchemeLayout + r.Layout
	}
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest.String()
	}
	return s
}

// Abs returns r with a relative layout path made absolute against dir.
func (r Reference) Abs(dir string) Reference {
	if r.IsLayout() && !filepath.IsAbs(r.Layout) {
		r.Layout = filepath.Join(dir, r.Layout)
	}
	return r
}
