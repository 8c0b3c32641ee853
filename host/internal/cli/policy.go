package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/nriwasm/nriwasm/host/oci"
	"github.com/nriwasm/nriwasm/host/oci/ref"
	"github.com/nriwasm/nriwasm/host/wasm"
)

func newPolicy() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Work with policy modules",
	}
	cmd.AddCommand(newPolicySeal(), newPolicyInspect(), newPolicyTest(), newPolicyPush(), newPolicyPull(), newPolicyVerify(), newPolicyPrecompile())
	return cmd
}

func newPolicySeal() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "seal FILE.wasm",
		Short: "Write the policy's metadata (its Info answer) into a custom section",
		Long: `seal loads the module, asks it for its metadata and writes it into the
"nriwasm.metadata" custom section, so tools read the policy's name, version, ABI
version and capabilities without running it. The file is rewritten in place
unless --output names another.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			module, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("read policy: %w", err)
			}
			sealed, md, err := wasm.Seal(cmd.Context(), module)
			if err != nil {
				return err
			}
			if out == "" {
				out = args[0]
			}
			if err := os.WriteFile(out, sealed, 0o644); err != nil {
				return fmt.Errorf("write sealed policy: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sealed %s: %s %s (ABI v%d.%d)\n", out, md.Name, md.Version, md.AbiMajor, md.AbiMinor)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the sealed module here instead of in place")
	return cmd
}

func newPolicyInspect() *cobra.Command {
	var f ociFlags
	var cacheDir string
	cmd := &cobra.Command{
		Use:   "inspect (NAME|FILE.wasm|oci://REGISTRY/REPOSITORY:TAG)",
		Short: "Print a policy's metadata, exports and, for an OCI artifact, its digest and annotations, without running it",
		Long: `inspect prints, as JSON, the policy's metadata section (name, version, ABI
version, capabilities) and the module's exports, read from the binary without
compiling or running it. For an OCI reference it also prints the resolved
digest, the layer's media type and the manifest's annotations.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var m *oci.Module
			var module []byte
			if ref.IsReference(args[0]) {
				var err error
				if m, err = pullModule(cmd, f, args[0], cacheDir); err != nil {
					return err
				}
				module = m.Bytes
			} else {
				var err error
				if _, module, err = readPolicy(args[0]); err != nil {
					return err
				}
			}
			out, err := inspect(args[0], module, m)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(out))
			return nil
		},
	}
	f.register(cmd.Flags())
	cacheFlag(cmd, &cacheDir)
	return cmd
}
