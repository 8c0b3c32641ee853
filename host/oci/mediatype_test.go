package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/nriwasm/nriwasm/internal/builtintest"
)

// pushManifest pushes module with the given config and layer media types,
// as another tool would, and tags it.
func pushManifest(t *testing.T, rem Remote, tag string, r string, configType, layerType string, module []byte) {
	t.Helper()
	ctx := context.Background()
	target, err := rem.Open(ctx, mustParse(t, r), true)
	if err != nil {
		t.Fatal(err)
	}
	cfgData := []byte("{}")
	cfg := content.NewDescriptorFromBytes(configType, cfgData)
	layer := content.NewDescriptorFromBytes(layerType, module)
	man := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: cfg, Layers: []ocispec.Descriptor{layer}}
	man.SchemaVersion = 2
	manData, err := json.Marshal(man)
	if err != nil {
		t.Fatal(err)
	}
	desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, manData)
	for _, b := range []struct {
		d    ocispec.Descriptor
		data []byte
	}{{layer, module}, {cfg, cfgData}, {desc, manData}} {
		if err := pushIfMissing(ctx, target, b.d, b.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := target.Tag(ctx, desc, tag); err != nil {
		t.Fatal(err)
	}
}

func TestMediaTypes(t *testing.T) {
	module := builtintest.Module(t, "conformance")
	reg := newRegistry(t)
	for _, tc := range []struct {
		name, config, layer string
		wantErr             string
	}{
		{"legacy layer accepted", ConfigMediaType, LegacyLayerMediaType, ""},
		{"older tools' config and layer accepted", LegacyConfigMediaType, LegacyLayerMediaType, ""},
		{"image layer", ConfigMediaType, ocispec.MediaTypeImageLayerGzip, `layer media type "application/vnd.oci.image.layer.v1.tar+gzip", want application/wasm`},
		{"image config", ocispec.MediaTypeImageConfig, LayerMediaType, `config media type "application/vnd.oci.image.config.v1+json", want application/vnd.wasm.config.v0+json`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := "oci://" + reg.host + "/policies/mt:" + strings.NewReplacer(" ", "-", "'", "").Replace(tc.name)
			pushManifest(t, reg.remote(), mustParse(t, r).Tag, r, tc.config, tc.layer, module)
			m, err := newFetcher(t, WithRemote(reg.remote()), WithCacheDir(t.TempDir())).Load(context.Background(), mustParse(t, r))
			if tc.wantErr == "" {
				if err != nil || !bytes.Equal(m.Bytes, module) {
					t.Fatalf("Load = %v", err)
				}
				// No annotations (another tool pushed it): the name and
				// version come from the module's metadata section.
				if m.Name != "conformance" || m.Version != "1.0.0" {
					t.Fatalf("loaded name %q version %q, want conformance 1.0.0 from the module's metadata", m.Name, m.Version)
				}
				return
			}
			if !errors.Is(err, ErrMediaType) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Load = %v, want ErrMediaType saying %q", err, tc.wantErr)
			}
		})
	}
}
