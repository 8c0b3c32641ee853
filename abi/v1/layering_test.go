package v1_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/nriwasm/nriwasm/"

// deps maps each package matching patterns to the repository packages it
// imports, directly or not (tests excluded), as `go list` reports them.
func deps(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	list, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}, patterns...)...).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(patterns, " "), err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, dep := range fields[1:] {
			if strings.HasPrefix(dep, module) {
				out[pkg] = append(out[pkg], strings.TrimPrefix(dep, module))
			}
		}
	}
	return out
}

// TestLayering checks the package rules host/RATIONALE.md states: the ABI's
// two sides import nothing of each other (the command line alone links the
// built-in policies' Go builds), and abi imports nothing but itself.
func TestLayering(t *testing.T) {
	forbidden := func(prefixes ...string) func(string) bool {
		return func(dep string) bool {
			for _, p := range prefixes {
				if strings.HasPrefix(dep, p) {
					return true
				}
			}
			return false
		}
	}
	for pkg, imported := range deps(t, module+"host/...", module+"sdk/...", module+"policies/...", module+"abi/...") {
		var bad func(string) bool
		switch {
		case pkg == "host/internal/cli" || strings.HasPrefix(pkg, "host/cmd/"):
			continue
		case strings.HasPrefix(pkg, "host/"):
			bad = forbidden("sdk/", "policies/")
		case strings.HasPrefix(pkg, "sdk/"), strings.HasPrefix(pkg, "policies/"):
			bad = forbidden("host/")
		case strings.HasPrefix(pkg, "abi/"):
			bad = forbidden("host/", "sdk/", "policies/")
		}
		for _, dep := range imported {
			if bad(dep) {
				t.Errorf("%s imports %s, which host/RATIONALE.md's package rules forbid", pkg, dep)
			}
		}
	}
}
