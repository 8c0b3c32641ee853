package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nriwasm/nriwasm/host/oci"
	"github.com/nriwasm/nriwasm/host/oci/ref"
	"github.com/nriwasm/nriwasm/host/oci/signature"
	"github.com/nriwasm/nriwasm/host/wasm"
)

func newPolicyPush() *cobra.Command {
	var plainHTTP bool
	var key string
	cmd := &cobra.Command{
		Use:   "push (NAME|FILE.wasm) oci://REGISTRY/REPOSITORY:TAG",
		Short: "Push a sealed policy module as an OCI artifact, signed with --key",
		Long: `push stores a sealed policy module (a built-in name or a .wasm file) in a
registry (oci://REGISTRY/REPOSITORY:TAG) or an OCI image layout on disk
(oci-layout://PATH:TAG) in the CNCF Wasm artifact layout, with its metadata
(name, version, ABI version, capabilities) as manifest annotations, and prints
the manifest's digest. With --key (a PEM private key) it also signs the
manifest and pushes the signature, a Sigstore bundle, as a referrer.
Credentials come from $NRIWASM_REGISTRY_USERNAME and $NRIWASM_REGISTRY_PASSWORD,
or the docker config file. docs/oci.md describes the format.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			name, module, err := readPolicy(args[0])
			if err != nil {
				return err
			}
			// Load it once: what a node would refuse (a seal that disagrees
			// with Info, a module that does not start) is refused here.
			p, err := wasm.Load(ctx, name, module, wasm.WithLogger(logr.Discard()))
			if err != nil {
				return fmt.Errorf("push: %w", err)
			}
			_ = p.Close(ctx)
			r, err := ref.Parse(args[1])
			if err != nil {
				return err
			}
			if r.Tag == "" {
				return fmt.Errorf("push %s: name a tag to push to (oci://REGISTRY/REPOSITORY:TAG)", r)
			}
			var signer *signature.Signer
			if key != "" {
				data, err := os.ReadFile(key)
				if err != nil {
					return fmt.Errorf("--key: %w", err)
				}
				priv, err := signature.ParsePrivateKey(data)
				if err != nil {
					return fmt.Errorf("--key %s: %w", key, err)
				}
				if signer, err = signature.NewSigner(priv); err != nil {
					return fmt.Errorf("--key %s: %w", key, err)
				}
			}
			remote := oci.Remote{}
			if !r.IsLayout() {
				if remote.Credential, err = oci.Credentials(os.Getenv); err != nil {
					return err
				}
				if plainHTTP {
					remote.PlainHTTP = []string{r.Registry}
				}
			}
			target, err := remote.Open(ctx, r, true)
			if err != nil {
				return err
			}
			desc, err := oci.Push(ctx, target, r.Tag, module)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "pushed %s\n", r.WithDigest(desc.Digest))
			if signer != nil {
				sig, err := signer.Attach(ctx, target, r.Name(), desc)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "signed %s with key %s (signature %s)\n", desc.Digest, signer.KeyHint(), sig.Digest)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&plainHTTP, "plain-http", false, "reach the registry over plain HTTP instead of HTTPS")
	cmd.Flags().StringVar(&key, "key", "", "sign with this PEM private key (PKCS #8 or SEC 1, unencrypted)")
	return cmd
}

// cacheFlag registers --cache-dir for the policy commands that pull.
func cacheFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "cache-dir", defaultCacheDir(), `cache directory: pulled policies are kept in its "oci" folder, an OCI image layout ("" for none, in memory)`)
}

func newPolicyPull() *cobra.Command {
	var f ociFlags
	var out, cacheDir string
	cmd := &cobra.Command{
		Use:   "pull oci://REGISTRY/REPOSITORY:TAG -o FILE.wasm",
		Short: "Pull a policy module, check its digest and, with --key, its signature",
		Long: `pull resolves the reference (a tag is resolved to a digest and logged),
downloads the policy artifact into the cache, checks every digest and the
media types, verifies the signature as --verify says (enforce when --key is
given), and writes the module to --output.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--output: required, the file to write the module to")
			}
			m, err := pullModule(cmd, f, args[0], cacheDir)
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, m.Bytes, 0o644); err != nil {
				return fmt.Errorf("write policy: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pulled %s (%s %s) to %s\n", m.Reference, m.Name, m.Version, out)
			return nil
		},
	}
	f.register(cmd.Flags())
	cacheFlag(cmd, &cacheDir)
	cmd.Flags().StringVarP(&out, "output", "o", "", "the file to write the module to")
	return cmd
}

func newPolicyVerify() *cobra.Command {
	var f ociFlags
	var cacheDir string
	cmd := &cobra.Command{
		Use:   "verify oci://REGISTRY/REPOSITORY:TAG --key FILE.pub",
		Short: "Verify a policy artifact's signature against trusted public keys",
		Long: `verify pulls the policy artifact (as pull does) and verifies that one of its
signature referrers was made over its digest by a key given with --key. It
exits non-zero when the artifact is unsigned or no signature verifies.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(f.keys) == 0 {
				return fmt.Errorf("--key: required, a PEM public key to verify with")
			}
			f.verify = string(signature.Enforce)
			m, err := pullModule(cmd, f, args[0], cacheDir)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "verified %s: signed by key %s\n", m.Reference, m.KeyHint)
			return nil
		},
	}
	f.register(cmd.Flags())
	_ = cmd.Flags().MarkHidden("verify")
	cacheFlag(cmd, &cacheDir)
	return cmd
}

// pullModule loads an OCI reference through the cache under cacheDir.
func pullModule(cmd *cobra.Command, f ociFlags, reference, cacheDir string) (*oci.Module, error) {
	ctx := cmd.Context()
	r, err := ref.Parse(reference)
	if err != nil {
		return nil, err
	}
	src, err := f.source(reference, cacheDir, newLogger(cmd.ErrOrStderr(), 0))
	if err != nil {
		return nil, err
	}
	fetcher, err := oci.NewFetcher(ctx, src.oci...)
	if err != nil {
		return nil, err
	}
	m, err := fetcher.Load(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := asked(m); err != nil {
		return nil, err
	}
	return m, nil
}

// inspection is what `policy inspect` prints.
type inspection struct {
	Reference   string            `json:"reference,omitempty"`
	Digest      string            `json:"digest,omitempty"`
	MediaType   string            `json:"mediaType,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Metadata    json.RawMessage   `json:"metadata"`
	Exports     []wasm.Export     `json:"exports"`
}

// inspect describes a module (and its artifact, when m is set) without
// running it.
func inspect(name string, module []byte, m *oci.Module) ([]byte, error) {
	md, err := wasm.ReadMetadata(module)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	if md == nil {
		return nil, fmt.Errorf("%s has no metadata section: run `nriwasm policy seal` on it", name)
	}
	mdJSON, err := protojson.Marshal(md)
	if err != nil {
		return nil, err
	}
	exports, err := wasm.Exports(module)
	if err != nil {
		return nil, err
	}
	in := inspection{Metadata: mdJSON, Exports: exports}
	if m != nil {
		in.Reference, in.Digest, in.MediaType, in.Annotations = m.Reference.String(), m.Digest.String(), m.Layer.MediaType, m.Annotations
	}
	// MarshalIndent re-indents the protojson part too, so the output is stable.
	return json.MarshalIndent(in, "", "  ")
}
