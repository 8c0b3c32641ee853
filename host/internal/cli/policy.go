package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nriwasm/nriwasm/host/wasm"
)

func newPolicy() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Work with policy modules",
	}
	cmd.AddCommand(newPolicySeal(), newPolicyInspect())
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
	return &cobra.Command{
		Use:   "inspect (NAME|FILE.wasm)",
		Short: "Print a policy's metadata section as JSON, without running it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, module, err := readPolicy(args[0])
			if err != nil {
				return err
			}
			md, err := wasm.ReadMetadata(module)
			if err != nil {
				return err
			}
			if md == nil {
				return fmt.Errorf("%s has no metadata section: run `nriwasm policy seal` on it", args[0])
			}
			data, err := protojson.Marshal(md)
			if err != nil {
				return err
			}
			// protojson varies its spacing on purpose; re-indent for a stable output.
			var out bytes.Buffer
			if err := json.Indent(&out, data, "", "  "); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), out.String())
			return nil
		},
	}
}
