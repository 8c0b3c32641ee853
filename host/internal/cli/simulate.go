package cli

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/internal/scenario"
	"github.com/nriwasm/nriwasm/host/wasm"
)

type simulateFlags struct {
	policyFlags
	scenario string
	output   string
	native   bool
}

func newSimulate() *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Run a policy through a scenario of pods, updates and claims and print every decision",
		Long: `simulate runs a policy (the built-in default unless --policy names another)
on the topology read from a sysfs tree, plays a scenario file through it (the
bundled example unless --scenario names one) as the agent would, keeping each
container's cpuset from the policy's answers, and prints every call, decision
and error, and the final state, as YAML or JSON. The same inputs give
byte-identical output. docs/simulate.md describes the scenario format.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimulate(cmd, f) },
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&f.scenario, "scenario", "", "a scenario file (default: the bundled example)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "yaml", "output format: yaml or json")
	cmd.Flags().BoolVar(&f.native, "native", false, "run the built-in policy's Go source in-process instead of its .wasm")
	return cmd
}

func runSimulate(cmd *cobra.Command, f simulateFlags) error {
	ctx := cmd.Context()
	if f.output != "yaml" && f.output != "json" {
		return fmt.Errorf("--output %q: want yaml or json", f.output)
	}
	sc, err := readScenario(f.scenario)
	if err != nil {
		return err
	}
	config, topo, err := f.inputs()
	if err != nil {
		return err
	}
	runner := scenario.NewRunner(topo, config)
	handler, err := f.logHandler(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	logs := &warnTee{next: handler, warn: runner.Warn}
	var transport abi.Transport
	if f.native {
		// The Go policy logs through log/slog's default logger.
		old := slog.Default()
		slog.SetDefault(slog.New(nativeLevels{logs}))
		defer slog.SetDefault(old)
		r, err := nativePolicy(f.policy)
		if err != nil {
			return err
		}
		if err := runner.Init(ctx, r); err != nil {
			return fmt.Errorf("policy %q (native): %w", f.policy, err)
		}
		transport = r
	} else {
		logger := logr.FromSlogHandler(logs)
		name, module, err := f.load(ctx, logger)
		if err != nil {
			return err
		}
		p, err := wasm.Load(ctx, name, module, f.wasmOptions(wasm.WithRestore(runner.Init), wasm.WithLogger(logger))...)
		if err != nil {
			return err
		}
		defer p.Close(ctx)
		transport = p
	}
	report, err := runner.Run(ctx, transport, sc)
	if err != nil {
		return err
	}
	render := report.YAML
	if f.output == "json" {
		render = report.JSON
	}
	out, err := render()
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}

// readScenario parses the named file, or the bundled example for "".
func readScenario(path string) (*scenario.Scenario, error) {
	data, name := scenario.Example, "bundled example scenario"
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("read scenario: %w", err)
		}
		name = path
	}
	sc, err := scenario.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return sc, nil
}
