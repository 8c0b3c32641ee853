package builtin_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/nriwasm/nriwasm/policies/builtin"
)

func TestModules(t *testing.T) {
	want := []string{"balloons", "conformance", "topology-aware"}
	if got := builtin.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %q, want %q", got, want)
	}
	for _, name := range want {
		m, ok := builtin.Module(name)
		if !ok || !bytes.HasPrefix(m, []byte("\x00asm\x01\x00\x00\x00")) {
			t.Errorf("Module(%q) = %d bytes (ok %v), want a Wasm module", name, len(m), ok)
		}
	}
	if _, ok := builtin.Module("nope"); ok {
		t.Error(`Module("nope") found a module`)
	}
}

// TestModuleIsNotCopied: every call answers the same bytes, the binary's own,
// rather than a new copy on the heap.
func TestModuleIsNotCopied(t *testing.T) {
	a, _ := builtin.Module(builtin.Default)
	b, _ := builtin.Module(builtin.Default)
	if &a[0] != &b[0] {
		t.Error("two calls returned different copies of the module")
	}
}
