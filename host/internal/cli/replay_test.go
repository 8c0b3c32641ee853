package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/record"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// nativeLoad loads a built-in policy's Go build as the manager's policy.
type nativeLoad struct {
	t abi.Transport
}

func (n *nativeLoad) Call(ctx context.Context, m abi.Method, req abi.Message) (*abi.Response, error) {
	return n.t.Call(ctx, m, req)
}
func (n *nativeLoad) Rebuilds() uint64            { return 0 }
func (n *nativeLoad) Discard(context.Context)     {}
func (n *nativeLoad) Close(context.Context) error { return nil }

// TestSimulateReplay: `simulate --replay` replays an agent's record against
// the policy's .wasm: with the recorded configuration nothing differs (exit
// 0); with two CPUs reserved instead of one, the container without a CPU
// request is reported on other CPUs and the command fails. The report is
// YAML by default (testdata/replay.golden), JSON with -o json, a line per
// difference with -o text.
func TestSimulateReplay(t *testing.T) {
	ctx := context.Background()
	topo := policytest.Machine(t, "N4C16")
	cfg := config.Default()
	cfg.Policy.Name, cfg.Policy.Data, cfg.StateDir = "topology-aware", []byte(`{"reservedResources":{"cpu":"1"}}`), t.TempDir()
	cfg.Record.Dir = filepath.Join(t.TempDir(), "record")
	m, err := resmgr.New(ctx, cfg, topo, func(ctx context.Context, restore wasm.RestoreFunc) (resmgr.Policy, error) {
		r, err := nativePolicy("topology-aware")
		if err != nil {
			return nil, err
		}
		return &nativeLoad{t: r}, restore(ctx, r)
	}, resmgr.WithNodeName("node-1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := startRecord(cfg, "topology-aware", topo, "", m, logr.Discard()); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	for i, milli := range []int64{500, 2000, 0} {
		req := policytest.Container([]string{"c0", "c1", "c2"}[i], milli).Request()
		if _, err := m.RunPodSandbox(ctx, req.Pod); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.CreateContainer(ctx, req.Pod, req.Container); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if files, err := record.Files(cfg.Record.Dir); err != nil || len(files) != 1 {
		t.Fatalf("record files %v (%v), want one", files, err)
	}

	out, errOut, code := run(t, "simulate", "--replay", cfg.Record.Dir, "--policy", "topology-aware", "-o", "text")
	if code != 0 || !strings.Contains(out, "replayed 7 requests against topology-aware (1 start(s) from a snapshot): 0 differ") {
		t.Fatalf("replay against the recorded configuration: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run(t, "simulate", "--replay", cfg.Record.Dir, "--policy", "topology-aware")
	if code != 0 || out != "policy: topology-aware\nreplayed: 7\nstarts: 1\ndifferences: []\n" {
		t.Fatalf("replay against the recorded configuration, as YAML: exit %d\n%s%s", code, out, errOut)
	}
	two := filepath.Join(t.TempDir(), "two.yaml")
	if err := os.WriteFile(two, []byte("reservedResources:\n  cpu: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	replayTwo := func(output string) string {
		t.Helper()
		out, errOut, code := run(t, "simulate", "--replay", cfg.Record.Dir, "--policy", "topology-aware", "--config", two, "-o", output)
		if code == 0 || !strings.Contains(errOut, "1 of 7 requests") {
			t.Fatalf("replay against two reserved CPUs, -o %s: exit %d\n%s%s", output, code, out, errOut)
		}
		return out
	}
	if out := replayTwo("text"); !strings.Contains(out, "#7 CreateContainer default/pod-c2/c\n    cpus: 1-7 → 2-7 (recorded → replayed)") {
		t.Fatalf("replay against two reserved CPUs, as text:\n%s", out)
	}
	golden(t, "testdata/replay.golden", replayTwo("yaml"))
	var report struct {
		Policy      string              `json:"policy"`
		Replayed    int                 `json:"replayed"`
		Differences []record.Divergence `json:"differences"`
	}
	if out := replayTwo("json"); json.Unmarshal([]byte(out), &report) != nil || report.Policy != "topology-aware" || report.Replayed != 7 ||
		len(report.Differences) != 1 || report.Differences[0].Recorded.CPUs != "1-7" || report.Differences[0].Replayed.CPUs != "2-7" {
		t.Fatalf("replay against two reserved CPUs, as JSON: %+v\n%s", report, out)
	}
	if _, errOut, code := run(t, "simulate", "--replay", cfg.Record.Dir, "--policy", "topology-aware", "-o", "map"); code == 0 ||
		!strings.Contains(errOut, `--output "map" with --replay: want one of yaml, json, text`) {
		t.Fatalf("-o map with --replay: exit %d, %s", code, errOut)
	}
}
