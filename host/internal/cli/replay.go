package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/internal/scenario"
	"github.com/nriwasm/nriwasm/host/record"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// errDiffers is the error of a replay that found differences: the command
// exits non-zero (a CI gate) after printing them.
var errDiffers = errors.New("the policy answers the record differently")

// runReplay replays the record at f.replay against --policy (with --config,
// or the recorded configuration) and prints what differs.
func runReplay(cmd *cobra.Command, f simulateFlags) error {
	ctx := cmd.Context()
	files, err := record.Read(f.replay)
	if err != nil {
		return err
	}
	var config []byte
	if f.config != "" {
		if config, err = os.ReadFile(f.config); err != nil {
			return fmt.Errorf("read policy config: %w", err)
		}
	}
	logger, name, module, err := f.loadLogged(cmd)
	if err != nil {
		return err
	}
	start := func(ctx context.Context, h *record.Header) (abi.Transport, func(), error) {
		cfg := config
		if f.config == "" {
			cfg = h.Config
		}
		initialize := func(ctx context.Context, t abi.Transport) error {
			_, err := abi.NewClient(t).Init(ctx, &abi.InitRequest{
				Config: cfg, NodeName: h.NodeName, Topology: h.Topology, Restore: h.Restore, DriverName: h.DriverName,
			})
			return err
		}
		p, err := wasm.Load(ctx, name, module, f.wasmOptions(wasm.WithRestore(initialize), wasm.WithLogger(logger))...)
		if err != nil {
			return nil, nil, err
		}
		return p, func() { p.Close(ctx) }, nil
	}
	res, err := record.Replay(ctx, files, start)
	if err != nil {
		return err
	}
	if err := printReplay(cmd.OutOrStdout(), f.output, name, res); err != nil {
		return err
	}
	if len(res.Differences) > 0 {
		return fmt.Errorf("%w: %d of %d requests", errDiffers, len(res.Differences), res.Replayed)
	}
	return nil
}

// replayOutputs are simulate --replay's output formats.
var replayOutputs = []string{"yaml", "json", "text"}

// replayReport is what simulate --replay prints as YAML or JSON: the policy
// replayed and what it answered differently.
type replayReport struct {
	Policy string `json:"policy"`
	*record.Result
}

// printReplay writes a replay's result in the output format: yaml, json or
// text.
func printReplay(w io.Writer, output, policy string, res *record.Result) error {
	report := replayReport{Policy: policy, Result: res}
	if res.Differences == nil { // printed as an empty list, not null
		report.Result = &record.Result{Replayed: res.Replayed, Starts: res.Starts, Differences: []record.Divergence{}}
	}
	switch output {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	case "yaml":
		out, err := scenario.YAML(report)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	fmt.Fprintf(w, "replayed %d requests against %s (%d start(s) from a snapshot): %d differ\n", res.Replayed, policy, res.Starts, len(res.Differences))
	for _, d := range res.Differences {
		fmt.Fprintf(w, "#%d %s %s\n", d.Seq, d.Method, d.Subject)
		for _, diff := range d.Differences {
			fmt.Fprintf(w, "    %s (recorded → replayed)\n", diff)
		}
	}
	return nil
}
