package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// TestCheckFailsWhenTheAskedDigestIsRefused moves a signed tag to an
// unsigned module: check, with the signed digest in its cache, exits non-zero
// rather than run the cache's earlier digest in place of the one asked for.
func TestCheckFailsWhenTheAskedDigestIsRefused(t *testing.T) {
	host := startRegistry(t)
	priv, pub := writeKeyPair(t, t.TempDir(), "owner")
	r := "oci://" + host + "/policies/p:stable"
	if _, errOut, code := run(t, "policy", "push", "conformance", r, "--plain-http", "--key", priv); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	sysfs := t.TempDir()
	if err := topologytest.Restore(filepath.Join("..", "..", "topology", "testdata", "captured-vm"), sysfs); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	check := func() (string, string, int) {
		return run(t, "check", "--policy", r, "--plain-http", "--key", pub, "--sysfs", sysfs, "--cache-dir", cache)
	}
	if _, errOut, code := check(); code != 0 {
		t.Fatalf("check of the signed digest exited %d: %s", code, errOut)
	}
	if _, errOut, code := run(t, "policy", "push", "balloons", r, "--plain-http"); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	out, errOut, code := check()
	if code == 0 || !strings.Contains(errOut, "is not what was asked") {
		t.Fatalf("check of a refused digest exited %d, want non-zero naming the refusal:\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := run(t, "policy", "pull", r, "--plain-http", "--key", pub, "--cache-dir", cache, "-o", filepath.Join(t.TempDir(), "p.wasm")); code == 0 {
		t.Fatalf("pull of a refused digest exited 0:\n%s", errOut)
	}
}

// TestPlainHTTPRegistryHint reaches a plain-HTTP registry over HTTPS: the
// error suggests --plain-http.
func TestPlainHTTPRegistryHint(t *testing.T) {
	host := startRegistry(t)
	r := "oci://" + host + "/policies/p:v1"
	if _, errOut, code := run(t, "policy", "push", "conformance", r, "--plain-http"); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	_, errOut, code := run(t, "policy", "pull", r, "--cache-dir", "", "-o", filepath.Join(t.TempDir(), "p.wasm"))
	if code == 0 || !strings.Contains(errOut, "--plain-http") {
		t.Fatalf("pull over HTTPS from a plain-HTTP registry exited %d, want a hint at --plain-http:\n%s", code, errOut)
	}
}
