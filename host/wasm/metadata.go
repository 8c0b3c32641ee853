package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// ErrNotWasm reports bytes that are not a WebAssembly binary module.
var ErrNotWasm = errors.New("not a WebAssembly module")

// ReadMetadata decodes the module's metadata custom section without compiling or
// running it. It answers nil, nil for a module without one, and refuses bytes
// that are not a module (ErrNotWasm) and a module with two metadata sections.
func ReadMetadata(module []byte) (*abi.PolicyMetadata, error) {
	if !bytes.HasPrefix(module, []byte(wasmbin.Header)) {
		head := module[:min(len(module), len(wasmbin.Header))]
		return nil, fmt.Errorf("%w: starts with %q, want %q", ErrNotWasm, head, wasmbin.Header)
	}
	sections, err := wasmbin.Parse(module)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotWasm, err)
	}
	var payload []byte
	found := 0
	for _, s := range sections {
		if s.ID != wasmbin.SectionCustom {
			continue
		}
		name, data, err := wasmbin.SplitCustom(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotWasm, err)
		}
		if name == abi.MetadataSection {
			payload = data
			found++
		}
	}
	switch found {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fmt.Errorf("%d %s sections, want at most one: which one a tool reads is undefined", found, abi.MetadataSection)
	}
	md := &abi.PolicyMetadata{}
	if err := md.UnmarshalVT(payload); err != nil {
		return nil, fmt.Errorf("decode %s section: %w", abi.MetadataSection, err)
	}
	return md, nil
}

// checkMetadata refuses a module whose metadata section declares another ABI
// major version, a name that is not a DNS label or a version that is not
// semver, before anything of it is compiled or run.
func checkMetadata(name string, md *abi.PolicyMetadata) error {
	if md == nil {
		return nil
	}
	if md.AbiMajor != abi.ABIMajor {
		return fmt.Errorf("policy %q declares ABI v%d.%d in its %s section, this host speaks v%d.%d: rebuild the policy with an SDK for ABI v%d",
			name, md.AbiMajor, md.AbiMinor, abi.MetadataSection, abi.ABIMajor, abi.ABIMinor, abi.ABIMajor)
	}
	if err := checkIdentity(md); err != nil {
		return fmt.Errorf("policy %q: %s section: %w", name, abi.MetadataSection, err)
	}
	return nil
}

// ValidateMetadata checks sealed metadata as Load does before running
// anything: the host's ABI major, a name that is a DNS label, a semver
// version. Tools that handle a module without loading it (push) use it.
func ValidateMetadata(md *abi.PolicyMetadata) error {
	if md.GetAbiMajor() != abi.ABIMajor {
		return fmt.Errorf("declares ABI v%d.%d, this host speaks v%d.%d", md.GetAbiMajor(), md.GetAbiMinor(), abi.ABIMajor, abi.ABIMinor)
	}
	return checkIdentity(md)
}

// checkIdentity checks what names a policy: a DNS label (it names the DRA
// driver) and a semver version without a leading "v".
func checkIdentity(md *abi.PolicyMetadata) error {
	if errs := validation.IsDNS1123Label(md.GetName()); len(errs) > 0 {
		return fmt.Errorf("name %q is not a DNS label: %s", md.GetName(), strings.Join(errs, "; "))
	}
	if _, err := semver.StrictNewVersion(md.GetVersion()); err != nil {
		return fmt.Errorf("version %q is not semver (MAJOR.MINOR.PATCH, no leading v): %w", md.GetVersion(), err)
	}
	return nil
}

// resealing is Seal's option: the module may carry an outdated seal, which
// Load then does not hold against Info.
func resealing(o *options) error {
	o.resealing = true
	return nil
}

// checkSealed refuses an instance whose Info disagrees with the module's
// sealed metadata: tools, registries and the agent's DRA driver name all go
// by the sealed copy.
func checkSealed(ctx context.Context, name string, md *abi.PolicyMetadata, t abi.Transport) error {
	info, err := abi.NewClient(t).Info(ctx, &abi.InfoRequest{HostAbiMinor: abi.ABIMinor})
	if err != nil {
		return fmt.Errorf("policy %q: Info: %w", name, err)
	}
	if !info.GetMetadata().EqualVT(md) {
		return fmt.Errorf("policy %q: its %s section (%s %s) disagrees with what Info answers (%s %s): seal the module again",
			name, abi.MetadataSection, md.GetName(), md.GetVersion(), info.GetMetadata().GetName(), info.GetMetadata().GetVersion())
	}
	return nil
}

// Seal returns module with its metadata section set to what the policy's Info
// answers, so tools read name, version, ABI version and capabilities without
// running it. Sealing is deterministic: the same module seals to the same bytes.
func Seal(ctx context.Context, module []byte, opts ...Option) ([]byte, *abi.PolicyMetadata, error) {
	p, err := Load(ctx, "unsealed", module, append(opts, resealing)...)
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
	if err := checkIdentity(md); err != nil {
		return nil, nil, fmt.Errorf("seal: Info: %w", err)
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
