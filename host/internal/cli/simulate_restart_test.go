package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// TestSimulateRestartKeepsPlacements plays testdata/restart.yaml, whose
// restart steps rebuild topology-aware from the checkpoint and Synchronize,
// through the .wasm and natively (identical reports), and the same scenario
// without its restart steps: every container must end where it ends without
// a restart, and no restart step may fail or move anything.
func TestSimulateRestartKeepsPlacements(t *testing.T) {
	dir := t.TempDir()
	sysfs := filepath.Join(dir, "sysfs")
	if err := topologytest.N4C16().Write(sysfs); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte("reservedResources: {cpu: 750m}\ndra: {enabled: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withRestart := filepath.Join("testdata", "restart.yaml")
	raw, err := os.ReadFile(withRestart)
	if err != nil {
		t.Fatal(err)
	}
	without := filepath.Join(dir, "without.yaml")
	if err := os.WriteFile(without, []byte(strings.ReplaceAll(string(raw), "  - restart: {}\n", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	args := func(sc string) []string {
		return []string{"--policy", "topology-aware", "--config", config, "--scenario", sc, "--output", "json"}
	}
	wasm := simulate(t, sysfs, args(withRestart)...)
	if native := simulate(t, sysfs, append(args(withRestart), "--native")...); native != wasm {
		t.Fatalf("--native differs from Wasm:\n%s\n---\n%s", wasm, native)
	}
	type report struct {
		Steps []struct {
			Kind    string
			Calls   []string
			Updates []json.RawMessage
			Errors  []json.RawMessage
		}
		Final json.RawMessage
	}
	var got, want report
	if err := json.Unmarshal([]byte(wasm), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(simulate(t, sysfs, args(without)...)), &want); err != nil {
		t.Fatal(err)
	}
	restarts := 0
	for i, s := range got.Steps {
		for _, e := range s.Errors {
			t.Errorf("step %d (%s): %s", i, s.Kind, e)
		}
		if s.Kind != "restart" {
			continue
		}
		restarts++
		if len(s.Calls) != 2 || !strings.HasPrefix(s.Calls[0], "Init (restoring ") || s.Calls[1] != "Synchronize" {
			t.Errorf("step %d: calls %v", i, s.Calls)
		}
		if len(s.Updates) != 0 {
			t.Errorf("step %d: the restart moved containers: %s", i, s.Updates)
		}
	}
	if restarts != 2 {
		t.Fatalf("%d restart steps in the report, want 2", restarts)
	}
	if string(got.Final) != string(want.Final) {
		t.Errorf("placements after restarts:\n%s\nwithout restarts:\n%s", got.Final, want.Final)
	}
}
