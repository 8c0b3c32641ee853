package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
)

// TestMessages: inputs a user gets wrong are named plainly.
func TestMessages(t *testing.T) {
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "policy.wasm")
	if err := os.WriteFile(notWasm, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(dir, "key.pub")
	if err := os.WriteFile(pub, []byte("unused"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a file that is not Wasm", []string{"policy", "inspect", notWasm}, "not a WebAssembly module"},
		{"--verify off with --key", []string{"policy", "pull", "oci://localhost:1/p:v1", "-o", filepath.Join(dir, "out.wasm"), "--verify", "off", "--key", pub},
			"--verify off with --key: the keys would be ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, tt.args...)
			if code == 0 || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stderr %q; want a failure containing %q", code, errOut, tt.want)
			}
		})
	}
}

// TestPushRefusesWhatANodeWouldRefuse: push loads the module first, so a
// module whose seal disagrees with its Info never reaches a registry.
func TestPushRefusesWhatANodeWouldRefuse(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.wasm")
	if err := os.WriteFile(path, wasmtest.LoopingModule(wasmtest.EntryInitialize), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "policy", "push", path, "oci-layout://"+filepath.Join(dir, "layout")+":v1")
	if code == 0 || !strings.Contains(errOut, "push: ") || !strings.Contains(errOut, "start-up limit") {
		t.Fatalf("exit %d, stderr %q; want push to fail loading the module", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "layout")); err == nil {
		t.Fatal("push wrote the layout of a module a node would refuse")
	}
}
