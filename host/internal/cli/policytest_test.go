package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/policies/builtin"
)

// TestPolicyTestPassesABuiltInPolicy: the conformance policy passes every
// check, its golden report and its native build included.
func TestPolicyTestPassesABuiltInPolicy(t *testing.T) {
	sysfs := capturedVM(t)
	golden := filepath.Join(t.TempDir(), "golden.yaml")
	if err := os.WriteFile(golden, []byte(simulate(t, sysfs)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "policy", "test", "conformance", "--sysfs", sysfs, "--cache-dir", cacheDir,
		"--golden", golden, "--native", "conformance")
	if code != 0 {
		t.Fatalf("policy test exited %d: %s\n%s", code, errOut, out)
	}
	if strings.Contains(errOut, "policy instance rebuilt") {
		t.Errorf("the checks' deliberate rebuilds are logged at the default --policy-log:\n%s", errOut)
	}
	for _, check := range []string{"Handshake", "Describe", "EmptyCalls", "Determinism", "RestoreAfterRebuild", "AnswersWithinLimits", "Golden", "Native"} {
		if !strings.Contains(out, "ok    "+check+"\n") {
			t.Errorf("output lacks a passed %s:\n%s", check, out)
		}
	}
}

// TestPolicyTestNamesTheFailedCheckAndThePolicy: a module that breaks a check
// fails the command, which names the check and the policy by its sealed name,
// not the file's.
func TestPolicyTestNamesTheFailedCheckAndThePolicy(t *testing.T) {
	module, err := os.ReadFile(filepath.Join("..", "..", "abicheck", "testdata", "faulty.wasm"))
	if err != nil {
		t.Fatalf("%v: run make policies", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "my-build.wasm")
	config := filepath.Join(dir, "config")
	if err := os.WriteFile(file, module, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte("fault=forget"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "policy", "test", file, "--sysfs", capturedVM(t), "--cache-dir", cacheDir, "--config", config)
	if code == 0 {
		t.Fatalf("policy test passed a module that forgets its restore state:\n%s", out)
	}
	if !strings.Contains(out, "FAIL  RestoreAfterRebuild: ") || !strings.Contains(out, "ok    Determinism\n") {
		t.Errorf("output does not fail RestoreAfterRebuild alone:\n%s", out)
	}
	if want := `nriwasm: policy "faulty": 1 of 6 checks failed: RestoreAfterRebuild`; !strings.Contains(errOut, want) || strings.Contains(errOut, "my-build") {
		t.Errorf("stderr %q; want %q", errOut, want)
	}
}

// TestPolicyTestFlagErrors: a --native that is not a built-in policy and an
// unknown --policy-log level are refused before anything runs.
func TestPolicyTestFlagErrors(t *testing.T) {
	sysfs := capturedVM(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"policy", "test", "conformance", "--sysfs", sysfs, "--native", "nope"}, `--native: policy "nope" has no native build`},
		{[]string{"policy", "test", "conformance", "--sysfs", sysfs, "--policy-log", "loud"}, `--policy-log "loud": want error, warn, info or debug`},
		{[]string{"simulate", "--sysfs", sysfs, "--policy-log", "loud"}, `--policy-log "loud"`},
		{[]string{"check", "--sysfs", sysfs, "--policy-log", "loud"}, `--policy-log "loud"`},
	} {
		if _, errOut, code := run(t, tc.args...); code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestPolicyLogShowsThePolicysOwnLogs: --policy-log info and debug show what
// the policy logs at those levels, in Wasm and natively; the default shows
// warnings and errors only.
func TestPolicyLogShowsThePolicysOwnLogs(t *testing.T) {
	sysfs := capturedVM(t)
	path := writeScenario(t, "steps:\n- pod: {name: p, containers: [{name: log}]}\n")
	for _, native := range []bool{false, true} {
		for level, want := range map[string][]string{
			"":      {"conformance: warn", "conformance: error"},
			"info":  {"conformance: info", "conformance: warn"},
			"debug": {"conformance: debug", "conformance: info"},
		} {
			args := []string{"simulate", "--policy", "conformance", "--sysfs", sysfs, "--cache-dir", cacheDir, "--scenario", path}
			if level != "" {
				args = append(args, "--policy-log", level)
			}
			if native {
				args = append(args, "--native")
			}
			_, errOut, code := run(t, args...)
			if code != 0 {
				t.Fatalf("%v exited %d: %s", args, code, errOut)
			}
			for _, w := range want {
				if !strings.Contains(errOut, w) {
					t.Errorf("--policy-log %q, native %v: stderr lacks %q:\n%s", level, native, w, errOut)
				}
			}
			if level == "" && (strings.Contains(errOut, "conformance: info") || strings.Contains(errOut, "conformance: debug")) {
				t.Errorf("default --policy-log shows info or debug:\n%s", errOut)
			}
		}
	}
}

// TestSealedNameInErrors: an error about a sealed module read from a file
// names the policy as it names itself.
func TestSealedNameInErrors(t *testing.T) {
	module, _ := builtin.Module("conformance")
	file := filepath.Join(t.TempDir(), "renamed.wasm")
	if err := os.WriteFile(file, module, 0o644); err != nil {
		t.Fatal(err)
	}
	path := writeScenario(t, "steps:\n- pod: {name: p, containers: [{name: panic}]}\n")
	out := simulate(t, capturedVM(t), "--policy", file, "--scenario", path)
	if !strings.Contains(out, `policy \"conformance\": CreateContainer: policy trapped`) && !strings.Contains(out, `policy "conformance": CreateContainer: policy trapped`) || strings.Contains(out, "renamed") {
		t.Errorf("the trap is not reported under the sealed name:\n%s", out)
	}
}
