package policy_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/internal/wasmsize"
)

// TestBindingsShareOneShape builds the conformance guest and fails if any of
// the dispatcher's functions is a generic instance over a struct shape: the
// bindings are generic over pointers only, so that serve is one function for
// every call and no instance carries a name spelling out a message's fields
// (sdk/go/RATIONALE.md, "Why are the dispatcher's generic bindings over
// pointers, with `newOf` and `orEmpty`?"). Over the request and response
// structs there were 72.
func TestBindingsShareOneShape(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := wasmsize.BuildGo(root, "./sdk/go/conformance/cmd/conformance", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	funcs := rep.FunctionsIn("github.com/nriwasm/nriwasm/sdk/go/policy")
	serves := 0
	for _, f := range funcs {
		if strings.Contains(f.Name, "go.shape.struct") {
			t.Errorf("a dispatcher function is instantiated over a struct (%d bytes of code): %.200s…", f.CodeBytes, f.Name)
		}
		if strings.Contains(f.Name, ".serve_") {
			serves++
		}
	}
	if len(funcs) < 20 || serves == 0 {
		t.Fatalf("%d functions of the SDK, %d of serve: the module's names are not what the test expects", len(funcs), serves)
	}
}
