package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/go-logr/logr"

	"github.com/spf13/cobra"

	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

func newPolicyPrecompile() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "precompile --out DIR [NAME|FILE.wasm|- ...]",
		Short: "Compile policies for this architecture into a seed of the compilation cache, for the agent's image",
		Long: `precompile compiles the named policies (default: every built-in one) for this
machine's architecture, as the agent does, and writes the compiled code into
DIR with a manifest (seed.json) of each file's sha256 and of the wazero build,
CPU features and deadline instrumentation it was built for. The agent's image
carries DIR (policy.seedDir, default /usr/lib/nriwasm/seed): an agent that has
never run a policy copies its compiled code from there into policy.cacheDir
after checking all of this, instead of compiling it; on any mismatch it logs
why and compiles. "-" reads a module from stdin: the agent runs this command
as a child process to compile a policy that is in neither (docs/agent.md).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out: required")
			}
			if len(args) == 0 {
				args = builtin.Names()
			}
			modules := map[string][]byte{}
			for _, a := range args {
				if a == "-" {
					module, err := io.ReadAll(cmd.InOrStdin())
					if err != nil {
						return fmt.Errorf("read policy from stdin: %w", err)
					}
					modules["stdin"] = module
					continue
				}
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

// compileInChild compiles module in a child process (exe policy precompile
// --out DIR -, the module on stdin) into a new seed directory, so the
// compile's memory peak is the child's and leaves with it; the agent then
// loads the policy from that seed (wasm.WithSeedDir) without compiling. env
// is the child's environment (nil: the agent's). The child dies with the
// agent (dieWithParent). The caller removes the directory once the policy is
// loaded.
func compileInChild(ctx context.Context, exe string, env []string, module []byte) (string, error) {
	dir, err := os.MkdirTemp("", "nriwasm-compile-")
	if err != nil {
		return "", fmt.Errorf("compile in a child process: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, "policy", "precompile", "--out", dir, "-")
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(module)
	dieWithParent(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("compile in a child process (%s policy precompile): %w: %s", exe, err, bytes.TrimSpace(out))
	}
	return dir, nil
}

// childCompile is the agent's wasm.CompileFunc: it compiles a module in a
// child process (compileInChild, exe being the agent's binary and env the
// child's environment) into a seed directory, which the returned cleanup
// removes.
func childCompile(exe string, env []string, log logr.Logger) wasm.CompileFunc {
	return func(ctx context.Context, module []byte) (string, func(), error) {
		start := time.Now()
		log.Info("compiling the policy in a child process")
		dir, err := compileInChild(ctx, exe, env, module)
		if err != nil {
			return "", nil, err
		}
		log.Info("policy compiled in a child process", "duration", time.Since(start).Round(time.Millisecond).String())
		return dir, func() { os.RemoveAll(dir) }, nil
	}
}
