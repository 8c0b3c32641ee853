package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// asNriwasmEnv, set, makes the test binary run the nriwasm command its
// arguments name.
const asNriwasmEnv = "NRIWASM_CLI_TEST_AS_NRIWASM"

// cacheDir is one compiled-code cache for the package's tests, so the
// conformance module compiles once.
var cacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "nriwasm-cli-test")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	if sys := os.Getenv(fakeSysEnv); sys != "" {
		os.Exit(onFakeMachine(sys))
	}
	// The agent re-executes itself (compileInChild): here that is the test
	// binary, which then runs the command instead of the tests.
	if exe := os.Getenv(compileParentEnv); exe != "" {
		os.Exit(compileAsParent(exe))
	}
	if os.Getenv(asNriwasmEnv) != "" {
		os.Exit(Execute(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Setenv(asNriwasmEnv, "1")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// capturedVM restores the captured 2-CPU VM's sysfs tree.
func capturedVM(t *testing.T) string {
	t.Helper()
	sysfs := t.TempDir()
	if err := topologytest.Restore(filepath.Join("..", "..", "topology", "testdata", "captured-vm"), sysfs); err != nil {
		t.Fatal(err)
	}
	return sysfs
}

// simulate runs the command on the captured VM and fails the test unless it succeeds.
func simulate(t *testing.T, sysfs string, args ...string) string {
	t.Helper()
	args = append([]string{"simulate", "--sysfs", sysfs, "--cache-dir", cacheDir}, args...)
	if !slices.Contains(args, "--policy") {
		args = append(args, "--policy", "conformance")
	}
	out, errOut, code := run(t, args...)
	if code != 0 {
		t.Fatalf("%s exited %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func TestSimulateIsDeterministicAndNativeMatchesWasm(t *testing.T) {
	sysfs := capturedVM(t)
	for _, policy := range []string{"conformance", "topology-aware"} {
		for _, scenario := range []string{"", filepath.Join("testdata", "simulate.yaml")} {
			for _, format := range []string{"yaml", "json"} {
				args := []string{"--policy", policy, "--output", format}
				if scenario != "" {
					args = append(args, "--scenario", scenario)
				}
				first := simulate(t, sysfs, args...)
				if second := simulate(t, sysfs, args...); second != first {
					t.Errorf("%s, scenario %q, %s: two runs differ:\n%s\n---\n%s", policy, scenario, format, first, second)
				}
				if native := simulate(t, sysfs, append(args, "--native")...); native != first {
					t.Errorf("%s, scenario %q, %s: --native differs from Wasm:\n%s\n---\n%s", policy, scenario, format, first, native)
				}
				if format == "json" && !json.Valid([]byte(first)) {
					t.Errorf("%s, scenario %q: --output json is not JSON:\n%s", policy, scenario, first)
				}
			}
		}
	}
}

func TestSimulateGolden(t *testing.T) {
	out := simulate(t, capturedVM(t), "--scenario", filepath.Join("testdata", "simulate.yaml"))
	golden(t, filepath.Join("testdata", "simulate.golden"), out)
}

// golden compares got with the file, or writes it under -update.
func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (review, then run with -update to accept): %s", file, lineDiff(string(want), got))
	}
}

// lineDiff is the first lines where two texts differ, with their line
// number.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		a, b := "", ""
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			context := func(lines []string) string { return strings.Join(lines[min(i, len(lines)):min(i+5, len(lines))], "\n") }
			return fmt.Sprintf("line %d: want\n%s\ngot\n%s", i+1, context(w), context(g))
		}
	}
	return ""
}
