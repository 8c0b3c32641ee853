package builtin

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNamesAreTheWasmFiles: every module in this directory is embedded.
func TestNamesAreTheWasmFiles(t *testing.T) {
	files, err := filepath.Glob("*.wasm")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		want = append(want, strings.TrimSuffix(f, ".wasm"))
	}
	slices.Sort(want)
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, the directory holds %v", got, want)
	}
}
