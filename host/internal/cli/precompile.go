package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

func newPolicyPrecompile() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "precompile --out DIR [NAME|FILE.wasm ...]",
		Short: "Compile policies for this architecture into a seed of the compilation cache, for the agent's image",
		Long: `precompile compiles the named policies (default: every built-in one) for this
machine's architecture, as the agent does, and writes the compiled code into
DIR with a manifest (seed.json) of each file's sha256 and of the wazero build,
CPU features and deadline instrumentation it was built for. The agent's image
carries DIR (policy.seedDir, default /usr/lib/nriwasm/seed): an agent that has
never run a policy copies its compiled code from there into policy.cacheDir
after checking all of this, instead of compiling it; on any mismatch it logs
why and compiles.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out: required")
			}
			if len(args) == 0 {
				args = builtin.Names()
			}
			modules := map[string][]byte{}
			for _, a := range args {
				name, module, err := readPolicy(a)
				if err != nil {
					return err
				}
				modules[name] = module
			}
			if err := wasm.Precompile(cmd.Context(), out, modules); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "precompiled %d policies into %s\n", len(modules), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the seed directory to write (created)")
	return cmd
}
