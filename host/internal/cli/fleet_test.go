package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/host/config"
)

// TestFleetWithoutCluster: fleet.enabled without cluster access leaves the
// file's policy in place, says so in one log line, and returns no fleet.
func TestFleetWithoutCluster(t *testing.T) {
	cfg := config.Default()
	cfg.Policy.Name = "balloons"
	cfg.Policy.Data = []byte(`{"pinCPU":true}`)
	cfg.Fleet.Enabled = true
	cfg.DRA.Kubeconfig = filepath.Join(t.TempDir(), "missing-kubeconfig")
	var out bytes.Buffer
	if f := startFleet(context.Background(), cfg, newLogger(&out, 0)); f != nil {
		t.Fatalf("startFleet without cluster access = %+v, want nil", f)
	}
	if cfg.Policy.Name != "balloons" || string(cfg.Policy.Data) != `{"pinCPU":true}` {
		t.Errorf("the file's policy changed: %s %s", cfg.Policy.Name, cfg.Policy.Data)
	}
	log := out.String()
	if n := strings.Count(log, "\n"); n != 1 || !strings.Contains(log, "fleet: no cluster access; the policy comes from the local file") {
		t.Errorf("log (%d lines):\n%s", n, log)
	}
	// Off: nothing tried, nothing logged.
	out.Reset()
	cfg.Fleet.Enabled = false
	if f := startFleet(context.Background(), cfg, newLogger(&out, 0)); f != nil || out.Len() != 0 {
		t.Errorf("fleet off: %+v, log %q", f, out.String())
	}
}
