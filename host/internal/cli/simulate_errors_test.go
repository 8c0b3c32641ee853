package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeScenario writes a scenario file into a temporary directory.
func writeScenario(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSimulateRejectsBadScenarios(t *testing.T) {
	sysfs := capturedVM(t)
	for name, tc := range map[string]struct{ scenario, want string }{
		"unknown field": {
			"steps:\n- pod: {name: a, containers: [{name: c}]}\n- pod: {name: b, containers: [{name: c, resourcs: {}}]}\n",
			`steps[1].pod.containers[0].resourcs: unknown field (steps[1].pod.containers[0] has `,
		},
		"bad quantity": {
			"steps:\n- pod: {name: a, containers: [{name: c, resources: {requests: {cpu: abc}}}]}\n",
			`steps[0].pod.containers[0].resources.requests.cpu: bad quantity "abc"`,
		},
		"unknown pod in remove": {
			"steps:\n- pod: {name: a}\n- remove: a\n- remove: a\n",
			`steps[2].remove: no pod "a"`,
		},
		"unknown container in update": {
			"steps:\n- pod: {name: a, containers: [{name: c}]}\n- update: {container: a/d}\n",
			`steps[1].update.container: pod "a" has no container "d"`,
		},
		"two kinds in a step": {
			"steps:\n- {devices: {}, release: x}\n",
			"steps[0]: want exactly one of pod, container, remove, update, claim, release, reconfigure, devices, restart, got devices, release",
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeScenario(t, tc.scenario)
			_, errOut, code := run(t, "simulate", "--policy", "conformance", "--sysfs", sysfs, "--cache-dir", cacheDir, "--scenario", path)
			if code == 0 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, path) {
				t.Errorf("exit %d, stderr %q; want it to name the file and %q", code, errOut, tc.want)
			}
		})
	}
}

func TestSimulateReportsRefusalsAndGoesOn(t *testing.T) {
	path := writeScenario(t, `steps:
- pod: {name: p, containers: [{name: refuse}, {name: ok}]}
- remove: p/refuse
- devices: {}
`)
	out := simulate(t, capturedVM(t), "--scenario", path)
	for _, want := range []string{
		"      - call: CreateContainer default/p/refuse\n        kind: policy\n        code: RESOURCE_EXHAUSTED\n        field: container.name\n        message: refused by design\n",
		"      - id: p-ok\n",
		"  - step: 1\n    kind: remove\n    target: default/p/refuse\n    calls: []\n    errors:\n      - call: remove default/p/refuse\n        kind: skipped\n",
		"  - step: 2\n    kind: devices\n",
		"final:\n  containers:\n    - id: p-ok\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSimulateRebuildsAfterATrap(t *testing.T) {
	path := writeScenario(t, `steps:
- pod: {name: first, containers: [{name: main, annotations: {conformance.nriwasm.io/cpuset: "1"}}]}
- pod: {name: crash, containers: [{name: panic}]}
- pod: {name: after, containers: [{name: main}]}
`)
	out := simulate(t, capturedVM(t), "--scenario", path)
	for _, want := range []string{
		"kind: runtime\n        message: 'policy \"conformance\": CreateContainer: policy trapped",
		"conformance: panic requested",
		"      - Init (restoring 2 pods, 1 containers, 0 claims)\n      - RunPodSandbox default/after\n",
		"final:\n  containers:\n    - id: first-main\n      cpus: \"1\"\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSimulateFlagErrors(t *testing.T) {
	sysfs := capturedVM(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--native", "--policy", "nope"}, `policy "nope" has no native build (native: balloons, conformance, topology-aware`},
		{[]string{"--output", "xml"}, `--output "xml": want one of yaml, json, map, html`},
		{[]string{"--scenario", "/nonexistent.yaml"}, "read scenario"},
	} {
		args := append([]string{"simulate", "--policy", "conformance", "--sysfs", sysfs, "--cache-dir", cacheDir}, tc.args...)
		if _, errOut, code := run(t, args...); code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestFirstStartErrors: a configuration the policy refuses at its first Init
// reads as the policy failing to start, naming the field, in simulate (Wasm
// and native) and check; a file that is not WebAssembly says so.
func TestFirstStartErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	notWasm := filepath.Join(dir, "notes.wasm")
	if err := os.WriteFile(bad, []byte("bogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notWasm, []byte("(module)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--config", bad}, `nriwasm: policy "topology-aware" failed to start: Init: INVALID_ARGUMENT: config.bogus: unknown field`},
		{[]string{"simulate", "--native", "--config", bad}, `nriwasm: policy "topology-aware" (native) failed to start: Init: INVALID_ARGUMENT: config.bogus: unknown field`},
		{[]string{"check", "--config", bad}, `nriwasm: policy "topology-aware" failed to start: Init: INVALID_ARGUMENT: config.bogus: unknown field`},
		{[]string{"simulate", "--policy", notWasm}, `nriwasm: policy "notes": not a WebAssembly module: starts with "(module)", want "\x00asm\x01\x00\x00\x00"`},
		{[]string{"policy", "inspect", notWasm}, `nriwasm: policy ` + notWasm + `: not a WebAssembly module`},
	} {
		_, errOut, code := run(t, append(tc.args, "--cache-dir", cacheDir)...)
		if code == 0 || !strings.HasPrefix(errOut, tc.want) || strings.Contains(errOut, "restoring") {
			t.Errorf("%v: exit %d, stderr %q; want it to start %q", tc.args, code, errOut, tc.want)
		}
	}
}
