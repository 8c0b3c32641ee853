package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/cpumap"
	"github.com/nriwasm/nriwasm/host/internal/scenario"
	"github.com/nriwasm/nriwasm/host/wasm"
	balloonsexamples "github.com/nriwasm/nriwasm/policies/balloons/examples"
	taexamples "github.com/nriwasm/nriwasm/policies/topologyaware/examples"
)

type simulateFlags struct {
	policyFlags
	scenario string
	output   string
	native   bool
	replay   string
}

func newSimulate() *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Run a policy through a scenario of pods, updates and claims and print every decision",
		Long: `simulate runs a policy (the built-in default unless --policy names another)
on a node (the built-in reference 2-socket server unless --sysfs names a sysfs
tree: --sysfs /sys for this machine), plays a scenario file through it as the
agent would, keeping each container's cpuset from the policy's answers, and
prints every call, decision and error, and the final state, as YAML or JSON.
Without --scenario and --config it runs the policy's bundled example with its
configuration (a built-in policy without one runs the generic example). The
same inputs give byte-identical output, on any machine.
docs/simulate.md describes the scenario format.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimulate(cmd, f) },
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&f.scenario, "scenario", "", "a scenario file (default: the bundled example)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "yaml", "output format: yaml (the report, with each step's CPU map as comments), json (the report), map (the CPU maps alone) or html (one page with a map per step); with --replay: yaml, json (what differs, with both answers) or text (one line per difference)")
	cmd.Flags().BoolVar(&f.native, "native", false, "run the built-in policy's Go source in-process instead of its .wasm")
	cmd.Flags().StringVar(&f.replay, "replay", "", "replay an agent's record (its record.dir, or one record-*.nrr file) against --policy, with --config or the recorded configuration, print what differs and exit non-zero if anything does (docs/rollout.md)")
	return cmd
}

func runSimulate(cmd *cobra.Command, f simulateFlags) error {
	ctx := cmd.Context()
	if f.replay != "" {
		if f.scenario != "" || f.native || f.sysfs != "" {
			return errors.New("--replay takes the node and history from the record: not with --scenario, --native or --sysfs")
		}
		if !slices.Contains(replayOutputs, f.output) {
			return fmt.Errorf("--output %q with --replay: want one of %s", f.output, strings.Join(replayOutputs, ", "))
		}
		return runReplay(cmd, f)
	}
	if !slices.Contains(outputs, f.output) {
		return fmt.Errorf("--output %q: want one of %s", f.output, strings.Join(outputs, ", "))
	}
	sc, bundledConfig, err := readScenario(f.scenario, f.policy)
	if err != nil {
		return err
	}
	config, topo, err := f.inputs()
	if err != nil {
		return err
	}
	if f.config == "" && f.scenario == "" {
		config = bundledConfig
	}
	runner, err := scenario.NewRunner(topo, config)
	if err != nil {
		return err
	}
	if f.sysfs == "" {
		runner.Machine(referenceMachine)
	}
	handler, err := f.logHandler(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	logs := &warnTee{next: handler, warn: runner.Warn}
	var transport abi.Transport
	if f.native {
		// The Go policy logs through log/slog's default logger.
		old := slog.Default()
		slog.SetDefault(slog.New(nativeLevels{logs}).With("policy", f.policy)) // as host/wasm names a Wasm policy
		defer slog.SetDefault(old)
		r, err := nativePolicy(f.policy)
		if err != nil {
			return err
		}
		if err := runner.Init(ctx, r); err != nil {
			return fmt.Errorf("policy %q (native) failed to start: %w", f.policy, err)
		}
		transport = r
		runner.SetRestarter(func(ctx context.Context) (abi.Transport, error) {
			r, err := nativePolicy(f.policy)
			if err != nil {
				return nil, err
			}
			return r, runner.Init(ctx, r)
		})
	} else {
		logger := logr.FromSlogHandler(logs)
		name, module, err := f.load(ctx, logger)
		if err != nil {
			return err
		}
		opts := f.wasmOptions(wasm.WithRestore(runner.Init), wasm.WithLogger(logger))
		p, err := wasm.Load(ctx, name, module, opts...)
		if err != nil {
			return err
		}
		defer func() { p.Close(ctx) }()
		transport = p
		// A restart loads the module again, as a new agent process does
		// (from the compiled-code cache when there is one).
		runner.SetRestarter(func(ctx context.Context) (abi.Transport, error) {
			p.Close(ctx)
			next, err := wasm.Load(ctx, name, module, opts...)
			if err != nil {
				return nil, err
			}
			p = next
			return p, nil
		})
	}
	report, err := runner.Run(ctx, transport, sc)
	if err != nil {
		return err
	}
	return writeReport(cmd.OutOrStdout(), report, f.output)
}

// outputs are simulate's output formats.
var outputs = []string{"yaml", "json", "map", "html"}

// writeReport writes the report in format; maps are coloured when w is a
// terminal and NO_COLOR is unset.
func writeReport(w io.Writer, report *scenario.Report, format string) error {
	colour := isTerminal(w) && os.Getenv("NO_COLOR") == ""
	var out []byte
	var err error
	switch format {
	case "json":
		out, err = report.JSON()
	case "map":
		var b bytes.Buffer
		for _, m := range report.Maps {
			if err := m.Text(&b, colour); err != nil {
				return err
			}
			b.WriteString("\n")
		}
		out = b.Bytes()
	case "html":
		var b bytes.Buffer
		err = cpumap.HTML(&b, report.Description, report.Maps)
		out = b.Bytes()
	default:
		out, err = report.YAMLWithMaps(colour)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// isTerminal tells whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// readScenario parses the named file, or for "" the bundled example of the
// policy (the generic one for a policy without its own) and returns that
// example's configuration too.
func readScenario(path, policy string) (*scenario.Scenario, []byte, error) {
	b, ok := bundles[policy]
	if !ok {
		b = bundle{scenario: scenario.Example}
	}
	data, name := b.scenario, "bundled example scenario"
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, nil, fmt.Errorf("read scenario: %w", err)
		}
		name = path
	}
	sc, err := scenario.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return sc, b.config, nil
}

// bundle is a built-in policy's example scenario and the configuration it
// runs with.
type bundle struct{ scenario, config []byte }

// bundles are the examples simulate runs without --scenario and --config, by
// built-in policy name. Add a policy's example here with one line.
var bundles = map[string]bundle{
	"topology-aware": {taexamples.Scenario, taexamples.Config},
	"balloons":       {balloonsexamples.Scenario, balloonsexamples.Config},
}
