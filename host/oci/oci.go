// Package oci ships policy modules as OCI artifacts: it pushes a module to a
// registry or an OCI image layout, and loads one back through a
// content-addressed cache, verifying its digest on every load and its
// signature as the verification mode says.
//
// An artifact follows the CNCF Wasm OCI layout: an image manifest whose
// config has the media type application/vnd.wasm.config.v0+json and whose one
// layer is the module, application/wasm (what older tools pushed, config
// application/vnd.wasm.config.v1+json and layer
// application/vnd.wasm.content.layer.v1+wasm, is accepted on pull). The
// manifest's annotations carry the module's metadata section (name, version,
// ABI version, capabilities), so a registry's UI and `nriwasm policy inspect`
// show them without running the module.
//
//	f, _ := oci.NewFetcher(ctx, oci.WithCacheDir("/var/lib/nriwasm/oci"), oci.WithVerification(signature.Enforce, v))
//	m, err := f.Load(ctx, r) // r from ref.Parse("oci://registry.example.com/policies/balloons:1.2")
//
// All OCI work goes through oras-go. See RATIONALE.md for the decisions.
package oci

// Media types of a policy artifact.
const (
	// ConfigMediaType is the config of a CNCF Wasm artifact.
	ConfigMediaType = "application/vnd.wasm.config.v0+json"
	// LegacyConfigMediaType is the config the CNCF layout's predecessors
	// (wasm-to-oci and the tools that followed it) pushed with
	// LegacyLayerMediaType; accepted on pull, never pushed.
	LegacyConfigMediaType = "application/vnd.wasm.config.v1+json"
	// LayerMediaType is the module layer.
	LayerMediaType = "application/wasm"
	// LegacyLayerMediaType is the module layer older tools push; accepted on
	// pull, never pushed.
	LegacyLayerMediaType = "application/vnd.wasm.content.layer.v1+wasm"
)

// Annotations set on a policy manifest from the module's metadata section.
const (
	AnnotationTitle        = "org.opencontainers.image.title"
	AnnotationVersion      = "org.opencontainers.image.version"
	AnnotationPolicyName   = "io.nriwasm.policy.name"
	AnnotationABIVersion   = "io.nriwasm.policy.abi-version"
	AnnotationCapabilities = "io.nriwasm.policy.capabilities"
	AnnotationSDK          = "io.nriwasm.policy.sdk"
)

// Limits on what is read from a registry.
const (
	// MaxManifestSize bounds a manifest (the OCI distribution spec's own
	// recommendation is 4 MiB).
	MaxManifestSize = 4 << 20
	// MaxModuleSize bounds a module layer.
	MaxModuleSize = 256 << 20
)
