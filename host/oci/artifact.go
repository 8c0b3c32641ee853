package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// ErrMediaType is an artifact that is not a policy: a manifest, config or
// layer of another media type.
var ErrMediaType = errors.New("not a policy artifact")

// wasmConfig is the config blob of a CNCF Wasm artifact.
type wasmConfig struct {
	Architecture string   `json:"architecture"`
	OS           string   `json:"os"`
	LayerDigests []string `json:"layerDigests"`
}

// Annotations returns the manifest annotations for a module's metadata.
func Annotations(md *abi.PolicyMetadata) map[string]string {
	var caps []string
	for _, m := range md.GetCapabilities() {
		caps = append(caps, m.Short())
	}
	a := map[string]string{
		AnnotationTitle:      md.GetName(),
		AnnotationPolicyName: md.GetName(),
		AnnotationVersion:    md.GetVersion(),
		AnnotationABIVersion: fmt.Sprintf("%d.%d", md.GetAbiMajor(), md.GetAbiMinor()),
	}
	if len(caps) > 0 {
		a[AnnotationCapabilities] = strings.Join(caps, ",")
	}
	if md.GetSdk() != "" {
		a[AnnotationSDK] = md.GetSdk()
	}
	return a
}

// Push stores module in target as a policy artifact and tags it (unless tag
// is ""). The module must be sealed (`nriwasm policy seal`): its metadata
// becomes the annotations. The same module always gives the same manifest
// digest.
func Push(ctx context.Context, target oras.Target, tag string, module []byte) (ocispec.Descriptor, error) {
	md, err := wasm.ReadMetadata(module)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("push policy: %w", err)
	}
	if md == nil {
		return ocispec.Descriptor{}, errors.New("push policy: the module has no metadata section: run `nriwasm policy seal` on it first")
	}
	if err := wasm.ValidateMetadata(md); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("push policy: %s section: %w", abi.MetadataSection, err)
	}
	layer := content.NewDescriptorFromBytes(LayerMediaType, module)
	layer.Annotations = map[string]string{AnnotationTitle: md.GetName() + ".wasm"}
	cfgData, err := json.Marshal(wasmConfig{Architecture: "wasm", OS: "wasip1", LayerDigests: []string{layer.Digest.String()}})
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("push policy: %w", err)
	}
	cfg := content.NewDescriptorFromBytes(ConfigMediaType, cfgData)
	man := ocispec.Manifest{
		MediaType:   ocispec.MediaTypeImageManifest,
		Config:      cfg,
		Layers:      []ocispec.Descriptor{layer},
		Annotations: Annotations(md),
	}
	man.SchemaVersion = 2
	manData, err := json.Marshal(man)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("push policy: %w", err)
	}
	desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, manData)
	for _, b := range []struct {
		d    ocispec.Descriptor
		data []byte
	}{{layer, module}, {cfg, cfgData}, {desc, manData}} {
		if err := pushIfMissing(ctx, target, b.d, b.data); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("push policy: %s %s: %w", b.d.MediaType, b.d.Digest, err)
		}
	}
	if tag != "" {
		if err := target.Tag(ctx, desc, tag); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("push policy: tag %s: %w", tag, err)
		}
	}
	return desc, nil
}

func pushIfMissing(ctx context.Context, target content.Storage, d ocispec.Descriptor, data []byte) error {
	ok, err := target.Exists(ctx, d)
	if err != nil || ok {
		return err
	}
	return target.Push(ctx, d, bytes.NewReader(data))
}

// Artifact is a policy artifact read back from a store.
type Artifact struct {
	// Manifest is the manifest's descriptor (its digest identifies the policy).
	Manifest ocispec.Descriptor
	// Annotations are the manifest's annotations.
	Annotations map[string]string
	// Layer is the module layer's descriptor.
	Layer ocispec.Descriptor
	// Module is the module's bytes, checked against Layer's digest.
	Module []byte
}

// Read reads the policy artifact whose manifest is m from store, checking
// every digest and size and the media types of the manifest, config and
// layer. A blob whose digest does not match fails with
// content.ErrMismatchedDigest; another media type with ErrMediaType.
func Read(ctx context.Context, store content.ReadOnlyStorage, m ocispec.Descriptor) (*Artifact, error) {
	if m.MediaType != ocispec.MediaTypeImageManifest {
		return nil, fmt.Errorf("manifest %s has media type %q, want %s: %w", m.Digest, m.MediaType, ocispec.MediaTypeImageManifest, ErrMediaType)
	}
	data, err := fetchLimited(ctx, store, m, MaxManifestSize)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", m.Digest, err)
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(data, &man); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", m.Digest, err)
	}
	if man.Config.MediaType != ConfigMediaType && man.Config.MediaType != LegacyConfigMediaType {
		return nil, fmt.Errorf("manifest %s: config media type %q, want %s (or %s): %w", m.Digest, man.Config.MediaType, ConfigMediaType, LegacyConfigMediaType, ErrMediaType)
	}
	if len(man.Layers) != 1 {
		return nil, fmt.Errorf("manifest %s: %d layers, want one (the module): %w", m.Digest, len(man.Layers), ErrMediaType)
	}
	layer := man.Layers[0]
	if layer.MediaType != LayerMediaType && layer.MediaType != LegacyLayerMediaType {
		return nil, fmt.Errorf("manifest %s: layer media type %q, want %s (or %s): %w", m.Digest, layer.MediaType, LayerMediaType, LegacyLayerMediaType, ErrMediaType)
	}
	module, err := fetchLimited(ctx, store, layer, MaxModuleSize)
	if err != nil {
		return nil, fmt.Errorf("module layer %s: %w", layer.Digest, err)
	}
	return &Artifact{Manifest: m, Annotations: man.Annotations, Layer: layer, Module: module}, nil
}

// fetchLimited reads a blob of at most limit bytes, checking its size and
// digest.
func fetchLimited(ctx context.Context, store content.ReadOnlyStorage, d ocispec.Descriptor, limit int64) ([]byte, error) {
	if d.Size > limit {
		return nil, fmt.Errorf("%d bytes, over the limit of %d", d.Size, limit)
	}
	rc, err := store.Fetch(ctx, d)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return content.ReadAll(rc, d)
}
