//go:build integration && e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Helm runs the cached helm CLI against the cluster, with Helm state
// directories of its own (nothing of the user's is read or written).
type Helm struct {
	bin, kubeconfig, home, chart string
}

// NewHelm returns the CLI for c and the chart at chart.
func (c *Cluster) NewHelm(chart string) (*Helm, error) {
	abs, err := filepath.Abs(chart)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", chart, err)
	}
	home := filepath.Join(c.Dir, "helm")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, fmt.Errorf("helm home: %w", err)
	}
	return &Helm{bin: filepath.Join(c.Bin, "helm"), kubeconfig: c.Kubeconfig, home: home, chart: abs}, nil
}

// Run runs helm with args (then --kubeconfig), returning its output; an
// error carries the output.
func (h *Helm) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.bin, append(args, "--kubeconfig", h.kubeconfig)...)
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(h.home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(h.home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(h.home, "data"),
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Install runs helm install (or upgrade, when verb is "upgrade") of the
// chart as release into namespace with values, and returns how long helm
// took.
func (h *Helm) Install(ctx context.Context, verb, release, namespace string, values map[string]any) (time.Duration, error) {
	data, err := yaml.Marshal(values)
	if err != nil {
		return 0, fmt.Errorf("encoding values: %w", err)
	}
	file := filepath.Join(h.home, release+"-values.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return 0, fmt.Errorf("writing values: %w", err)
	}
	start := time.Now()
	_, err = h.Run(ctx, verb, release, h.chart, "--namespace", namespace, "--create-namespace", "--values", file)
	return time.Since(start), err
}
