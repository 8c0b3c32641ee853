package oci

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/nriwasm/nriwasm/host/oci/ref"
	"github.com/nriwasm/nriwasm/host/oci/signature"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// Fetcher loads policy modules from registries and layouts through its
// cache.
type Fetcher struct {
	o     options
	cache oras.GraphTarget
	log   logr.Logger
}

// NewFetcher checks the options and opens the cache (creating its
// directory).
func NewFetcher(ctx context.Context, opts ...Option) (*Fetcher, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	f := &Fetcher{o: o, log: o.logger}
	if o.cacheDir == "" {
		f.cache = memory.New()
		return f, nil
	}
	s, err := openCache(ctx, o.cacheDir, f.log)
	if err != nil {
		return nil, fmt.Errorf("policy cache %s: %w", o.cacheDir, err)
	}
	f.cache = s
	return f, nil
}

// openCache opens the cache layout in dir. An index.json that does not
// decode (a crash mid-write, a full disk) is set aside as
// index.json.corrupt-<unix time> and the layout opened afresh: the blobs stay
// and are found again by digest, tags are pulled again, so a corrupt index
// never keeps pulls failing while the registry is up.
func openCache(ctx context.Context, dir string, log logr.Logger) (*oci.Store, error) {
	s, err := oci.NewWithContext(ctx, dir)
	if err == nil {
		return s, nil
	}
	index := filepath.Join(dir, ocispec.ImageIndexFile)
	data, rerr := os.ReadFile(index)
	if rerr != nil || json.Valid(data) && json.Unmarshal(data, &ocispec.Index{}) == nil {
		return nil, err // not the index's fault
	}
	aside := fmt.Sprintf("%s.corrupt-%d", index, time.Now().Unix())
	if rerr := os.Rename(index, aside); rerr != nil {
		return nil, errors.Join(err, fmt.Errorf("set aside corrupt index: %w", rerr))
	}
	log.Error(err, "policy cache index is corrupt; set aside, the cache starts a new index", "index", index, "movedTo", aside)
	return oci.NewWithContext(ctx, dir)
}

// Module is a loaded policy module.
type Module struct {
	// Reference is the reference asked for, pinned to Digest.
	Reference ref.Reference
	// Digest is the manifest's digest.
	Digest digest.Digest
	// Name is the policy's name: its annotation, else the module's metadata
	// section's, else the repository's last element.
	Name string
	// Version is the policy's version: its annotation, else the module's
	// metadata section's (an artifact pushed by another tool, e.g. oras,
	// has no annotations).
	Version string
	// Annotations are the manifest's annotations.
	Annotations map[string]string
	// Bytes is the module, checked against its digest on this load.
	Bytes []byte
	// Manifest is the manifest's descriptor.
	Manifest ocispec.Descriptor
	// Layer is the module layer's descriptor.
	Layer ocispec.Descriptor
	// KeyHint names the key whose signature verified, "" when not verified.
	KeyHint string
	// Offline is set when the registry was unreachable and the module came
	// from the cache.
	Offline bool
	// Refused is the digest the source answered when signature verification
	// refused it and the cache's last verified digest (this module) was
	// loaded instead; "" when the module is the one the source answered.
	Refused digest.Digest
}

// ErrIntegrity is content from a registry or layout that does not match its
// digest or size: an integrity failure, never taken for an unreachable
// registry.
var ErrIntegrity = errors.New("integrity failure: the source answered content that does not match its digest")

// integrity marks err as an integrity failure when it is one.
func integrity(err error) error {
	if errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData) ||
		errors.Is(err, content.ErrInvalidDescriptorSize) {
		return fmt.Errorf("%w: %w", ErrIntegrity, err)
	}
	return err
}

// cacheKey tags a reference in the cache: unique per registry repository or
// layout, and tag or digest.
func cacheKey(r ref.Reference) string {
	if r.Tag != "" && r.Digest == "" {
		return r.Name() + ":" + r.Tag
	}
	return digestKey(r, r.Digest)
}

// digestKey tags a digest of r's repository in the cache. Every load that
// succeeds online tags it, whatever r named, so a digest-pinned reference
// finds offline a digest first loaded through a tag; a digest refused online
// loses it.
func digestKey(r ref.Reference, d digest.Digest) string {
	return r.Name() + "@" + d.String()
}

// Load resolves r (a tag is resolved to a digest, and logged), copies what the
// cache lacks from the registry or layout, reads the module back from the
// cache checking every digest, and verifies its signature as the mode says.
//
//   - Registry unreachable (any error but "not found" or ErrIntegrity within
//     Timeout): the cached copy for r is loaded, if there is one. A
//     digest-pinned reference finds a digest of its repository that a tag
//     loaded. Content that does not match its digest is an ErrIntegrity,
//     never a fallback.
//   - A cached blob that does not match its digest is removed and pulled
//     again (or, offline, refused).
//   - Under signature.Enforce, a module that is unsigned or whose signatures
//     do not verify is refused; if the cache holds an earlier digest of the
//     same reference that verifies, that one is loaded instead and the
//     refusal is logged, so a node keeps the policy it had (Module.Refused
//     names the refused digest). The refused digest loses its cache tags for
//     r's repository and, when no other reference uses it, leaves the cache
//     with its signatures: a withdrawn signature stays withdrawn offline.
func (f *Fetcher) Load(ctx context.Context, r ref.Reference) (*Module, error) {
	log := f.log.WithValues("reference", r.String())
	src, desc, remoteErr := f.pull(ctx, r)
	if errors.Is(remoteErr, errdef.ErrNotFound) || errors.Is(remoteErr, ErrIntegrity) {
		return nil, fmt.Errorf("policy %s: %w", r, remoteErr)
	}
	if remoteErr != nil {
		cached, err := f.cache.Resolve(ctx, cacheKey(r))
		if err != nil {
			return nil, fmt.Errorf("policy %s: cannot pull from the registry and no cached copy: %w%s", r, remoteErr, plainHTTPHint(remoteErr))
		}
		log.Error(remoteErr, "registry unreachable; loading the cached copy", "digest", cached.Digest)
		m, err := f.fromCache(ctx, r, cached, nil)
		if err != nil {
			return nil, fmt.Errorf("policy %s (cached, registry unreachable: %v): %w", r, remoteErr, err)
		}
		m.Offline = true
		return m, nil
	}
	m, err := f.fromCache(ctx, r, desc, src)
	if err != nil {
		if errors.Is(err, errRefused) {
			kept := f.lastGood(ctx, r, desc, src, log)
			f.forget(ctx, r, desc) // a refused module is not kept
			if kept != nil {
				log.Error(err, "new digest refused; loading the last verified one", "refused", desc.Digest, "digest", kept.Digest)
				kept.Refused = desc.Digest
				return kept, nil
			}
		}
		return nil, fmt.Errorf("policy %s: %w", r, err)
	}
	prev, prevErr := f.cache.Resolve(ctx, cacheKey(r))
	for _, key := range []string{cacheKey(r), digestKey(r, desc.Digest)} {
		if err := f.cache.Tag(ctx, desc, key); err != nil {
			return nil, fmt.Errorf("policy %s: cache: %w", r, err)
		}
	}
	if prevErr == nil && prev.Digest != desc.Digest {
		if f.prune(ctx, prev, "old policy digest removed from the cache", digestKey(r, prev.Digest)) {
			f.dropClassic(ctx, r, prev.Digest)
		}
	}
	return m, nil
}

// forget drops a digest refused online from r's cache tags and, when no
// other reference still uses it, from the cache with its signatures (its
// referrers, and its classic signature in r's repository), so it never loads
// offline afterwards.
func (f *Fetcher) forget(ctx context.Context, r ref.Reference, refused ocispec.Descriptor) {
	f.dropClassic(ctx, r, refused.Digest)
	untagger, ok := f.cache.(interface {
		Untag(context.Context, string) error
	})
	if ok {
		for _, key := range []string{cacheKey(r), digestKey(r, refused.Digest)} {
			if d, err := f.cache.Resolve(ctx, key); err == nil && d.Digest == refused.Digest {
				if err := untagger.Untag(ctx, key); err != nil {
					f.log.Error(err, "a refused policy digest keeps its cache tag", "digest", refused.Digest.String(), "tag", key)
				}
			}
		}
	}
	f.prune(ctx, refused, "refused policy digest removed from the cache")
}

// dropClassic removes from the cache the classic signature of d in r's
// repository, when it holds one.
func (f *Fetcher) dropClassic(ctx context.Context, r ref.Reference, d digest.Digest) {
	untagger, ok := f.cache.(interface {
		Untag(context.Context, string) error
	})
	c, err := f.cache.Resolve(ctx, classicKey(r, d))
	if err != nil || !ok {
		return
	}
	if err := untagger.Untag(ctx, classicKey(r, d)); err != nil {
		f.log.Error(err, "a classic signature stays in the cache", "digest", d.String())
		return
	}
	f.prune(ctx, c, "classic signature removed from the cache")
}

// prune removes a digest the cache no longer tags for any reference (a tag
// that moved, a refused digest), with its blobs and signatures, so the cache
// keeps one copy per reference; tags in ignore do not count as uses (they go
// with it). A failure is logged: it costs only disk space. msg is logged on
// removal, and prune reports whether it removed old.
func (f *Fetcher) prune(ctx context.Context, old ocispec.Descriptor, msg string, ignore ...string) bool {
	store, ok := f.cache.(*oci.Store)
	if !ok {
		return false
	}
	var used bool
	err := store.Tags(ctx, "", func(tags []string) error {
		for _, t := range tags {
			if t == old.Digest.String() || slices.Contains(ignore, t) {
				continue // every manifest is also tagged by its digest
			}
			if d, err := store.Resolve(ctx, t); err == nil && d.Digest == old.Digest {
				used = true
			}
		}
		return nil
	})
	if err == nil && !used {
		err = store.Delete(ctx, old)
	}
	if err != nil {
		f.log.Error(err, "an old policy digest stays in the cache", "digest", old.Digest.String())
		return false
	}
	if !used {
		f.log.Info(msg, "digest", old.Digest.String())
	}
	return !used
}

// pull resolves r at its source and copies the manifest, its blobs and its
// signatures into the cache.
func (f *Fetcher) pull(ctx context.Context, r ref.Reference) (oras.ReadOnlyGraphTarget, ocispec.Descriptor, error) {
	ctx, cancel := context.WithTimeout(ctx, f.o.timeout)
	defer cancel()
	src, err := f.o.remote.Open(ctx, r, false)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	desc, err := src.Resolve(ctx, r.Object())
	if err != nil {
		return nil, ocispec.Descriptor{}, fmt.Errorf("resolve %s: %w", r.Object(), err)
	}
	if r.Digest != "" && desc.Digest != r.Digest {
		return nil, ocispec.Descriptor{}, fmt.Errorf("resolve %s: the source answered %s: %w", r.Digest, desc.Digest, ErrIntegrity)
	}
	f.log.Info("policy reference resolved", "reference", r.String(), "digest", desc.Digest.String())
	if err := f.fill(ctx, src, desc); err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	if f.o.mode != signature.Off {
		for _, c := range f.classic(ctx, src, desc.Digest) {
			if err := oras.CopyGraph(ctx, src, namingTarget{f.cache}, c, oras.DefaultCopyGraphOptions); err != nil {
				return nil, ocispec.Descriptor{}, fmt.Errorf("copy classic signature %s to the cache: %w", c.Digest, integrity(err))
			}
			if err := f.cache.Tag(ctx, c, classicKey(r, desc.Digest)); err != nil {
				return nil, ocispec.Descriptor{}, fmt.Errorf("cache: %w", err)
			}
		}
	}
	return src, desc, nil
}

// classicKey tags in the cache the classic signature manifest of d in r's
// repository.
func classicKey(r ref.Reference, d digest.Digest) string {
	return r.Name() + ":" + signature.ClassicTag(d)
}

// classic resolves cosign's classic signature tag of d in store: none when
// it is missing (or cannot be read: that is logged, and the referrers may
// still verify).
func (f *Fetcher) classic(ctx context.Context, store interface {
	Resolve(context.Context, string) (ocispec.Descriptor, error)
}, d digest.Digest) []ocispec.Descriptor {
	c, err := store.Resolve(ctx, signature.ClassicTag(d))
	if err != nil {
		if !errors.Is(err, errdef.ErrNotFound) {
			f.log.Error(err, "classic signature tag not read", "tag", signature.ClassicTag(d))
		}
		return nil
	}
	return []ocispec.Descriptor{c}
}

// fill copies desc's graph and its signature referrers from src into the
// cache; what the cache holds already is not downloaded again.
func (f *Fetcher) fill(ctx context.Context, src oras.ReadOnlyGraphTarget, desc ocispec.Descriptor) error {
	dst := namingTarget{f.cache}
	if err := oras.CopyGraph(ctx, src, dst, desc, oras.DefaultCopyGraphOptions); err != nil {
		return fmt.Errorf("copy %s to the cache: %w", desc.Digest, integrity(err))
	}
	sigs, err := signature.Referrers(ctx, src, desc)
	if err != nil {
		f.log.Error(err, "signatures not copied", "digest", desc.Digest.String())
		return nil
	}
	for _, s := range sigs {
		if err := oras.CopyGraph(ctx, src, dst, s, oras.DefaultCopyGraphOptions); err != nil {
			return fmt.Errorf("copy signature %s to the cache: %w", s.Digest, integrity(err))
		}
	}
	return nil
}

// namingTarget names the blob in a failed push, so an integrity failure says
// which blob the source got wrong.
type namingTarget struct {
	oras.GraphTarget
}

// Push pushes d, naming it on failure.
func (t namingTarget) Push(ctx context.Context, d ocispec.Descriptor, r io.Reader) error {
	if err := t.GraphTarget.Push(ctx, d, r); err != nil {
		return fmt.Errorf("blob %s (%s, %d bytes): %w", d.Digest, d.MediaType, d.Size, err)
	}
	return nil
}

// plainHTTPHint suggests reaching the registry over plain HTTP when it
// answered HTTPS with HTTP.
func plainHTTPHint(err error) string {
	if errors.Is(err, http.ErrSchemeMismatch) {
		return " (the registry speaks plain HTTP: allow it with --plain-http, or list it in registry.plainHTTP in the agent's configuration)"
	}
	return ""
}

// errRefused marks a module refused by signature verification.
var errRefused = errors.New("refused by signature verification (mode enforce)")

// fromCache reads the artifact desc from the cache and verifies it. A blob
// that fails its digest is removed, and pulled again from src when there is
// one.
func (f *Fetcher) fromCache(ctx context.Context, r ref.Reference, desc ocispec.Descriptor, src oras.ReadOnlyGraphTarget) (*Module, error) {
	a, err := Read(ctx, f.cache, desc)
	if errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData) {
		f.log.Error(err, "cached policy does not match its digest; removing it", "digest", desc.Digest.String())
		if d, ok := f.cache.(interface {
			Delete(context.Context, ocispec.Descriptor) error
		}); ok {
			if derr := d.Delete(ctx, desc); derr != nil {
				return nil, fmt.Errorf("%w; removing it: %v", err, derr)
			}
		}
		if src == nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, f.o.timeout)
		err = f.fill(pctx, src, desc)
		cancel()
		if err != nil {
			return nil, err
		}
		a, err = Read(ctx, f.cache, desc)
	}
	if err != nil {
		return nil, err
	}
	m := &Module{
		Reference: r.WithDigest(desc.Digest), Digest: desc.Digest, Annotations: a.Annotations,
		Bytes: a.Module, Manifest: a.Manifest, Layer: a.Layer,
		Name: a.Annotations[AnnotationPolicyName], Version: a.Annotations[AnnotationVersion],
	}
	if m.Name == "" || m.Version == "" {
		// Not annotated: the module's own metadata section, when it has one.
		if md, err := wasm.ReadMetadata(m.Bytes); err == nil && md != nil {
			m.Name = cmp.Or(m.Name, md.GetName())
			m.Version = cmp.Or(m.Version, md.GetVersion())
		}
	}
	if m.Name == "" {
		m.Name = path.Base(r.Name())
	}
	// Online, signatures are read from the source, so one deleted there no
	// longer counts; offline, from the cache, which copied them.
	var sigs content.ReadOnlyGraphStorage = f.cache
	var classic []ocispec.Descriptor
	if src != nil {
		sigs = src
		if f.o.mode != signature.Off {
			classic = f.classic(ctx, src, desc.Digest)
		}
	} else if c, err := f.cache.Resolve(ctx, classicKey(r, desc.Digest)); err == nil {
		classic = []ocispec.Descriptor{c}
	}
	if m.KeyHint, err = f.verify(ctx, sigs, m, classic); err != nil {
		return nil, err
	}
	return m, nil
}

// verify checks m's signatures in store as the mode says.
func (f *Fetcher) verify(ctx context.Context, store content.ReadOnlyGraphStorage, m *Module, classic []ocispec.Descriptor) (string, error) {
	if f.o.mode == signature.Off {
		return "", nil
	}
	res, err := f.o.verifier.Verify(ctx, store, m.Manifest, classic...)
	if err == nil {
		f.log.Info("policy signature verified", "reference", m.Reference.String(), "key", res.KeyHint)
		return res.KeyHint, nil
	}
	if f.o.mode == signature.Warn {
		f.log.Error(err, "policy signature does not verify; loading it anyway (verification mode warn)", "reference", m.Reference.String())
		return "", nil
	}
	return "", fmt.Errorf("%s %w: %w", m.Digest, errRefused, err)
}

// lastGood loads the digest the cache last verified for r, if it is not
// refused itself: its signatures are read from src, the reachable source, so
// one withdrawn there does not count (and that digest is forgotten too).
func (f *Fetcher) lastGood(ctx context.Context, r ref.Reference, refused ocispec.Descriptor, src oras.ReadOnlyGraphTarget, log logr.Logger) *Module {
	prev, err := f.cache.Resolve(ctx, cacheKey(r))
	if err != nil || prev.Digest == refused.Digest {
		return nil
	}
	m, err := f.fromCache(ctx, r, prev, src)
	if err != nil {
		log.Error(err, "the last cached digest does not load either", "digest", prev.Digest.String())
		if errors.Is(err, errRefused) {
			f.forget(ctx, r, prev)
		}
		return nil
	}
	return m
}
