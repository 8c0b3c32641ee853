package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/host/compare"
	"github.com/nriwasm/nriwasm/host/shadow"
	"github.com/nriwasm/nriwasm/internal/testkit"
)

// TestShadowCommand: `nriwasm shadow` prints the agent's /debug/shadow report
// (counts per method, each divergence with both sides), and says what to set
// when the agent has no shadow.
func TestShadowCommand(t *testing.T) {
	rep := shadow.Report{
		Policy: "topology-aware", State: shadow.StateRunning, Compared: 7, Divergences: 1, Keep: 100,
		Methods: map[string]*shadow.MethodStats{"CreateContainer": {Compared: 3, Divergences: 1}, "RunPodSandbox": {Compared: 3}},
		Last: []shadow.Divergence{{Seq: 7, Time: time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC), Method: "CreateContainer", Subject: "default/pod-c2/c",
			Differences: []compare.Difference{{Field: "cpus", Active: "1-7", Other: "2-7"}}}},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/shadow", func(w http.ResponseWriter, _ *http.Request) { _ = json.NewEncoder(w).Encode(rep) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	out, errOut, code := run(t, "shadow", "--address", addr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"shadow policy topology-aware: running", "compared 7, diverged 1",
		"CreateContainer  3         1", "#7 21:00:00.000 CreateContainer default/pod-c2/c", "cpus: 1-7 → 2-7 (active → shadow)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	none := httptest.NewServer(shadowHandler(new(atomic.Pointer[shadow.Shadow])))
	defer none.Close()
	_, errOut, code = run(t, "shadow", "--address", strings.TrimPrefix(none.URL, "http://"))
	if code == 0 || !strings.Contains(errOut, "set policy.shadow") {
		t.Fatalf("exit %d, stderr %q: want a failure naming policy.shadow", code, errOut)
	}
}

// TestRunServesTheShadow: an agent with policy.shadow loads the shadow beside
// its policy and serves its report at /debug/shadow, which `nriwasm shadow`
// prints; it keeps a record under record.dir.
func TestRunServesTheShadow(t *testing.T) {
	a := newTestAgent(t)
	a.write(", shadow: {name: conformance, keep: 5}", "record: {maxSize: 1Mi}\n")
	a.start()
	testkit.Eventually(t, "the shadow running", func() bool {
		out, _, code := run(t, "shadow", "--address", a.addr)
		return code == 0 && strings.Contains(out, "shadow policy conformance: running")
	})
	if !strings.Contains(metricsText(a.addr), "nriwasm_shadow_running 1") {
		t.Error("nriwasm_shadow_running is not 1")
	}
	if files, err := filepath.Glob(filepath.Join(a.dir, "state", "record", "record-*.nrr")); err != nil || len(files) != 1 {
		t.Errorf("record files %v (%v), want one under <stateDir>/record", files, err)
	}
	a.stop()
}
