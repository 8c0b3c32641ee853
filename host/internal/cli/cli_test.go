package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Execute(args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func TestCheckOnACapturedNode(t *testing.T) {
	sysfs := t.TempDir()
	if err := topologytest.Restore(filepath.Join("..", "..", "topology", "testdata", "captured-vm"), sysfs); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "check", "--policy", "conformance", "--sysfs", sysfs, "--cache-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("check exited %d: %s", code, errOut)
	}
	for _, want := range []string{
		fmt.Sprintf("policy        conformance 1.0.0 (ABI v%d.%d, nriwasm-go/0.1.0, sealed)", abi.ABIMajor, abi.ABIMinor),
		"capabilities  Init, Reconfigure, Devices",
		": 2 CPUs, 1 NUMA nodes",
		`probe         CreateContainer default/probe → cpus "0-1"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPolicyInspectAndSeal(t *testing.T) {
	out, errOut, code := run(t, "policy", "inspect", "conformance")
	if code != 0 || !strings.Contains(out, `"name": "conformance"`) || !strings.Contains(out, `"abiMajor": 1`) {
		t.Fatalf("inspect: exit %d, out %s, err %s", code, out, errOut)
	}
	if _, errOut, code := run(t, "policy", "inspect", "no-such-policy"); code == 0 || !strings.Contains(errOut, "not a built-in policy (built in: "+strings.Join(builtin.Names(), ", ")+")") {
		t.Fatalf("inspect of an unknown name: exit %d, err %s", code, errOut)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "wasm", "testdata", "rawguest.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "raw.wasm")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "policy", "inspect", path); code == 0 || !strings.Contains(errOut, "has no metadata section") {
		t.Fatalf("inspect of an unsealed module: exit %d, err %s", code, errOut)
	}
	if _, errOut, code := run(t, "policy", "seal", path); code == 0 || !strings.Contains(errOut, "malformed") {
		t.Fatalf("seal of a module that answers garbage: exit %d, err %s", code, errOut)
	}
}
