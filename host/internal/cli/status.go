package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/cpumap"
)

// statusTimeout bounds the request to the agent.
const statusTimeout = 10 * time.Second

func newStatus() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print the running agent's live CPU map: which container holds each CPU",
		Long: `status asks the agent running on this node for its live CPU map (its
metrics port's /debug/cpus, as JSON) and prints it: sockets, NUMA nodes, cores
and threads, with the containers pinned to each CPU (in colour on a terminal
unless NO_COLOR is set). --address is the agent's metrics.address.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := fetchMap(cmd, address)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			return m.Text(out, isTerminal(out) && os.Getenv("NO_COLOR") == "")
		},
	}
	cmd.Flags().StringVar(&address, "address", config.DefaultMetricsAddress, "the agent's metrics address, host:port (an empty host is localhost)")
	return cmd
}

// fetchMap reads the agent's /debug/cpus as JSON.
func fetchMap(cmd *cobra.Command, address string) (*cpumap.Map, error) {
	body, err := fetchDebug(cmd, address, "/debug/cpus", "format=json")
	if err != nil {
		return nil, err
	}
	var m cpumap.Map
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("agent at %s: the CPU map is not JSON: %w", address, err)
	}
	return &m, nil
}
