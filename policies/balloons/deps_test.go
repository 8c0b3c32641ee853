//go:build !wasip1

package balloons_test

import (
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/internal/wasmsize"
)

// TestModuleLinksNoEncodingJSON builds the balloons module as `make
// policies` does and checks that none of its code is encoding/json's (nor a
// YAML parser's), which with the reflect code it keeps was 0.48 MB of it
// (RATIONALE.md, "Why is the configuration decoded by hand?"): a json call
// anywhere in the policy or what it imports would bring it back unnoticed.
// policyconfig still imports encoding/json for Decode, so the package's
// initialisation stays (4.6 KB: init, Number.String, an error type); its
// encoder and decoder (233 KB) must not.
func TestModuleLinksNoEncodingJSON(t *testing.T) {
	const maxJSONInit = 16 << 10
	rep, err := wasmsize.BuildGo(".", "./cmd/balloons", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range rep.Packages {
		switch {
		case p.Name == "github.com_nriwasm_nriwasm_policies_balloons":
			found = true
		case p.Name == "encoding_json" && p.CodeBytes <= maxJSONInit:
		case p.Name == "encoding_json" || strings.Contains(p.Name, "yaml"):
			t.Errorf("the balloons module holds %d bytes of %s's code (%d functions)", p.CodeBytes, p.Name, p.Functions)
		}
	}
	if !found {
		t.Fatalf("no code of the balloons package in the module: %+v", rep.Packages)
	}
}
