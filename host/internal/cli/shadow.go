package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/shadow"
)

func newShadow() *cobra.Command {
	var address, output string
	cmd := &cobra.Command{
		Use:   "shadow",
		Short: "Print how the running agent's shadow policy diverges from the active one",
		Long: `shadow asks the agent running on this node for its shadow policy's report
(its metrics port's /debug/shadow; policy.shadow in the agent's configuration)
and prints it: requests compared and diverged per method, drops, rebuilds and
failures, then the last divergences kept, each with both answers. --output json
prints the report as the agent serves it. --address is the agent's
metrics.address. docs/rollout.md walks through a rollout with it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			body, err := fetchDebug(cmd, address, "/debug/shadow", "")
			if err != nil {
				return err
			}
			var rep shadow.Report
			if err := json.Unmarshal(body, &rep); err != nil {
				return fmt.Errorf("the shadow report is not JSON: %w", err)
			}
			switch output {
			case "json":
				_, err := cmd.OutOrStdout().Write(body)
				return err
			case "text":
				return printShadow(cmd.OutOrStdout(), &rep)
			}
			return fmt.Errorf("--output %q: want text or json", output)
		},
	}
	cmd.Flags().StringVar(&address, "address", config.DefaultMetricsAddress, "the agent's metrics address, host:port (an empty host is localhost)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

// printShadow writes a shadow report for a person.
func printShadow(w io.Writer, rep *shadow.Report) error {
	fmt.Fprintf(w, "shadow policy %s: %s", rep.Policy, rep.State)
	if rep.Reason != "" {
		fmt.Fprintf(w, " (%s)", rep.Reason)
	}
	fmt.Fprintf(w, "\ncompared %d, diverged %d; dropped %d, rebuilt %d, failed %d\n\n", rep.Compared, rep.Divergences, rep.Dropped, rep.Resyncs, rep.Failures)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "METHOD\tCOMPARED\tDIVERGED")
	for _, m := range rep.MethodNames() {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", m, rep.Methods[m].Compared, rep.Methods[m].Divergences)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nlast %d divergences (of at most %d kept):\n", len(rep.Last), rep.Keep)
	for _, d := range rep.Last {
		fmt.Fprintf(w, "#%d %s %s %s\n", d.Seq, d.Time.Format("15:04:05.000"), d.Method, d.Subject)
		for _, diff := range d.Differences {
			fmt.Fprintf(w, "    %s (active → shadow)\n", diff)
		}
	}
	return nil
}

// fetchDebug reads one of the agent's debug pages: path, with the query
// query ("" for none).
func fetchDebug(cmd *cobra.Command, address, path, query string) ([]byte, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("--address %q: want host:port: %w", address, err)
	}
	if host == "" {
		host = "localhost"
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: path, RawQuery: query}
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Timeout: statusTimeout}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("agent at %s: %w (is `nriwasm run` running with metrics.address %s?)", u.Host, err, address)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("agent at %s: %w", u.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("agent at %s: %s: %s", u.Host, resp.Status, body)
	}
	return body, nil
}
