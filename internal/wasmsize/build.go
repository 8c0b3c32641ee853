package wasmsize

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildGo builds the Go package pkg (a path go build takes, relative to dir)
// into a Wasm module as `make policies` does (GOOS=wasip1, c-shared,
// -trimpath), under tmp, and analyzes it. Tests that guard what a guest links
// use it; the module is not sealed, which adds a custom section only.
func BuildGo(dir, pkg, tmp string) (*Report, error) {
	module := filepath.Join(tmp, "module.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-buildvcs=false", "-o", module, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("wasmsize: go build %s: %w\n%s", pkg, err, out)
	}
	b, err := os.ReadFile(module)
	if err != nil {
		return nil, fmt.Errorf("wasmsize: %w", err)
	}
	return Analyze(b)
}
