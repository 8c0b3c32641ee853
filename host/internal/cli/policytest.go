package cli

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/abicheck"
	"github.com/nriwasm/nriwasm/host/wasm"
)

type policyTestFlags struct {
	policyFlags
	scenario string
	golden   string
	native   string
}

func newPolicyTest() *cobra.Command {
	var f policyTestFlags
	cmd := &cobra.Command{
		Use:   "test (NAME|FILE.wasm|oci://REGISTRY/REPOSITORY:TAG)",
		Short: "Run the ABI checks every policy must pass, and compare a scenario's answers with a golden file or a native build",
		Long: `test runs the checks every policy module must pass before it is pushed
(host/abicheck): Handshake (the module loads and speaks ABI v1), Describe (Info's
metadata is valid and the module is sealed with it), EmptyCalls (every call with
an empty request answers instead of trapping), Determinism (the same calls give
the same answers on a fresh instance and after a new Init), RestoreAfterRebuild
(instances rebuilt from the host's journal before every call answer as the one
that kept its state) and AnswersWithinLimits (no trap, deadline, memory limit or
oversized or malformed answer while playing the scenario). With --golden the
scenario's report must equal the file (write one with nriwasm simulate and the
same --sysfs, --config and --scenario); with --native, a built-in policy's Go
build must give the same report. It prints one line per check and exits non-zero
naming the checks that failed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.policy = args[0]
			return runPolicyTest(cmd, f)
		},
	}
	f.registerInputs(cmd.Flags())
	cmd.Flags().StringVar(&f.scenario, "scenario", "", "the scenario to play (default: simulate's bundled example)")
	cmd.Flags().StringVar(&f.golden, "golden", "", "a report of the scenario, as nriwasm simulate prints it, to compare answer by answer")
	cmd.Flags().StringVar(&f.native, "native", "", "a built-in policy whose Go build must answer the scenario as the module does")
	return cmd
}

func runPolicyTest(cmd *cobra.Command, f policyTestFlags) error {
	ctx := cmd.Context()
	level, err := f.logLevel()
	if err != nil {
		return err
	}
	if level == slog.LevelInfo {
		// At the default, the checks' deliberate rebuilds would log one
		// INFO line each: show warnings and errors only.
		level = slog.LevelWarn
	}
	logger := logr.FromSlogHandler(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	o := []abicheck.Option{abicheck.WithWasm(f.wasmOptions(wasm.WithLogger(logger))...)}
	config, topo, err := f.inputs()
	if err != nil {
		return err
	}
	if len(config) > 0 {
		o = append(o, abicheck.WithConfig(config))
	}
	if f.scenario != "" {
		data, err := os.ReadFile(f.scenario)
		if err != nil {
			return fmt.Errorf("read scenario: %w", err)
		}
		o = append(o, abicheck.WithScenario(data))
	}
	if f.golden != "" {
		data, err := os.ReadFile(f.golden)
		if err != nil {
			return fmt.Errorf("read golden report: %w", err)
		}
		o = append(o, abicheck.WithGolden(data))
	}
	if f.native != "" {
		if _, err := nativePolicy(f.native); err != nil {
			return fmt.Errorf("--native: %w", err)
		}
		o = append(o, abicheck.WithNative(func() (abi.Transport, error) { return nativePolicy(f.native) }))
	}
	name, module, err := f.load(ctx, logger)
	if err != nil {
		return err
	}
	results, err := abicheck.Run(ctx, name, module, topo, o...)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	for _, r := range results {
		if r.Err == nil {
			fmt.Fprintf(out, "ok    %s\n", r.Check)
			continue
		}
		fmt.Fprintf(out, "FAIL  %s: %s\n", r.Check, strings.ReplaceAll(r.Err.Error(), "\n", "\n      "))
	}
	if failed := results.Failed(); len(failed) > 0 {
		return fmt.Errorf("policy %q: %d of %d checks failed: %s", name, len(failed), len(results), strings.Join(failed, ", "))
	}
	fmt.Fprintf(out, "policy %q passes every check: push it with nriwasm policy push\n", name)
	return nil
}
