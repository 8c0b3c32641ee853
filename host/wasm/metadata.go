package wasm

import (
	"context"
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// ReadMetadata decodes the module's metadata custom section without compiling or
// running it. It answers nil, nil for a module without one.
func ReadMetadata(module []byte) (*abi.PolicyMetadata, error) {
	payload, ok, err := wasmbin.CustomSection(module, abi.MetadataSection)
	if err != nil {
		return nil, fmt.Errorf("read %s section: %w", abi.MetadataSection, err)
	}
	if !ok {
		return nil, nil
	}
	md := &abi.PolicyMetadata{}
	if err := md.UnmarshalVT(payload); err != nil {
		return nil, fmt.Errorf("decode %s section: %w", abi.MetadataSection, err)
	}
	return md, nil
}

// checkMetadata refuses a module whose metadata section declares another ABI
// major version, before anything of it is compiled or run.
func checkMetadata(name string, md *abi.PolicyMetadata) error {
	if md == nil {
		return nil
	}
	if md.AbiMajor != abi.ABIMajor {
		return fmt.Errorf("policy %q declares ABI v%d.%d in its %s section, this host speaks v%d.%d: rebuild the policy with an SDK for ABI v%d",
			name, md.AbiMajor, md.AbiMinor, abi.MetadataSection, abi.ABIMajor, abi.ABIMinor, abi.ABIMajor)
	}
	return nil
}

// Seal returns module with its metadata section set to what the policy's Info
// answers, so tools read name, version, ABI version and capabilities without
// running it. Sealing is deterministic: the same module seals to the same bytes.
func Seal(ctx context.Context, module []byte, opts ...Option) ([]byte, *abi.PolicyMetadata, error) {
	p, err := Load(ctx, "unsealed", module, opts...)
	if err != nil {
		return nil, nil, err
	}
	defer p.Close(ctx)
	info, err := abi.NewClient(p).Info(ctx, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor})
	if err != nil {
		return nil, nil, fmt.Errorf("seal: %w", err)
	}
	md := info.GetMetadata()
	if md == nil || md.Name == "" {
		return nil, nil, fmt.Errorf("seal: Info answered no policy name")
	}
	if major, _ := abi.SplitVersion(p.Version()); md.AbiMajor != major {
		return nil, nil, fmt.Errorf("seal: Info declares ABI major %d but %s reports %d", md.AbiMajor, abi.ExportABIVersion, major)
	}
	payload, err := md.MarshalVT()
	if err != nil {
		return nil, nil, fmt.Errorf("seal: encode metadata: %w", err)
	}
	sealed, err := wasmbin.SetCustomSection(module, abi.MetadataSection, payload)
	if err != nil {
		return nil, nil, fmt.Errorf("seal: %w", err)
	}
	return sealed, md, nil
}
