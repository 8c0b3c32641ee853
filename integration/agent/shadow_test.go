//go:build integration

package agent_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/host/shadow"
	"github.com/nriwasm/nriwasm/integration/agent"
	"github.com/nriwasm/nriwasm/integration/containerd"
)

// shadowReport reads the agent's /debug/shadow.
func shadowReport(t *testing.T, a *agent.Agent) (shadow.Report, bool) {
	t.Helper()
	resp, err := http.Get(a.MetricsURL + "/debug/shadow")
	if err != nil {
		return shadow.Report{}, false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var rep shadow.Report
	return rep, resp.StatusCode == http.StatusOK && json.Unmarshal(body, &rep) == nil
}

// TestAgentShadowDiverges: on a real containerd the agent runs a shadow
// (topology-aware with pinCPU: false beside topology-aware): the Burstable
// container runs on the active policy's CPUs — its real cgroup says so — and
// /debug/shadow shows the CreateContainer divergence with both answers; the
// agent's record, replayed with the shadow's configuration, shows it too.
func TestAgentShadowDiverges(t *testing.T) {
	e := newEnv(t, "", func(o *agent.Options) {
		o.Config = "policy:\n  name: topology-aware\n  shadow:\n    name: topology-aware\n    config: {pinCPU: false}\n"
	})
	for deadline := time.Now().Add(checkTimeout); ; time.Sleep(100 * time.Millisecond) {
		if rep, ok := shadowReport(t, e.a); ok && rep.State == shadow.StateRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the shadow never ran")
		}
	}
	w := workload{pod: "shadowed", qos: containerd.Burstable, requestMilli: 500}
	e.run(t, w)
	placed, _ := e.check(t)
	real := placed[w.key()].cpuset
	var rep shadow.Report
	for deadline := time.Now().Add(checkTimeout); ; time.Sleep(100 * time.Millisecond) {
		var ok bool
		if rep, ok = shadowReport(t, e.a); ok && rep.Methods["CreateContainer"] != nil && rep.Methods["CreateContainer"].Compared > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shadow never compared the CreateContainer: %+v", rep)
		}
	}
	if rep.Divergences == 0 || len(rep.Last) == 0 {
		t.Fatalf("report %+v: want the CreateContainer divergence", rep)
	}
	d := rep.Last[len(rep.Last)-1]
	if d.Method != "CreateContainer" || d.Subject != w.key() || !sameCPUs(d.Active.CPUs, real) || d.Shadow.CPUs != "" {
		t.Fatalf("divergence %+v: want %s with the active cpus %q (its cgroup) and none from the shadow", d, w.key(), real)
	}
	t.Logf("cgroup cpuset %s; shadow %+v", real, d)

	// The same node's record, replayed by `nriwasm simulate --replay`: the
	// shadow's configuration shows the same container with other CPUs and
	// exits 1; the active one replays without a difference.
	unpinned := filepath.Join(t.TempDir(), "unpinned.yaml")
	if err := os.WriteFile(unpinned, []byte("pinCPU: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.a.StateDir, "record")
	var out []byte
	for deadline := time.Now().Add(checkTimeout); ; time.Sleep(200 * time.Millisecond) {
		var err error
		out, err = exec.Command(binary, "simulate", "--replay", dir, "-o", "text", "--policy", "topology-aware", "--config", unpinned).CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 && strings.Contains(string(out), "CreateContainer "+w.key()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replay of %s against pinCPU: false never showed %s's CreateContainer (%v):\n%s", dir, w.key(), err, out)
		}
	}
	t.Logf("replay against the shadow's configuration:\n%s", out)
	if out, err := exec.Command(binary, "simulate", "--replay", dir, "-o", "text", "--policy", "topology-aware").CombinedOutput(); err != nil || !strings.Contains(string(out), " 0 differ") {
		t.Fatalf("replay against the recorded policy and configuration: %v\n%s", err, out)
	}
}
