// Package examples_test builds the examples of docs/writing-policies.md: the
// page's code blocks must be the example files, and the Go example must pass
// its tests, build for wasip1 and pass every abicheck check. (make rust builds
// and checks the Rust example.)
package examples_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/abicheck"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// fileBlock is a fenced block whose info string names the file it shows.
var fileBlock = regexp.MustCompile("(?ms)^```[a-z]+ file=(\\S+)\n(.*?)^```\n")

// TestThePageShowsTheExamples: every "file=" block of the page is that file,
// byte for byte, and every example file is shown.
func TestThePageShowsTheExamples(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "writing-policies.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, m := range fileBlock.FindAllSubmatch(page, -1) {
		name := string(m[1])
		shown[name] = true
		want, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Errorf("the page shows %s: %v", name, err)
			continue
		}
		if !bytes.Equal(m[2], want) {
			t.Errorf("the page's %s differs from the file", name)
		}
	}
	for _, name := range []string{"examples/go/pin-all/main.go", "examples/go/pin-all/main_test.go",
		"examples/rust/pin-all/Cargo.toml", "examples/rust/pin-all/src/lib.rs"} {
		if !shown[name] {
			t.Errorf("the page does not show %s", name)
		}
	}
}

// goIn runs the go command in the Go example's module, offline: its go.sum
// holds every module it needs, all of them the repository's too.
func goIn(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join("go", "pin-all")
	cmd.Env = append(append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOWORK=off"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
}

// TestGoExample: the Go example, an outside module depending on the SDK,
// passes its native test, builds for wasip1, seals, and passes every check.
func TestGoExample(t *testing.T) {
	goIn(t, nil, "test", "./...")
	module := filepath.Join(t.TempDir(), "pin-all.wasm")
	goIn(t, []string{"GOOS=wasip1", "GOARCH=wasm"}, "build", "-buildmode=c-shared", "-trimpath", "-o", module, ".")
	raw, err := os.ReadFile(module)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cache := wasm.WithCacheDir(t.TempDir())
	sealed, md, err := wasm.Seal(ctx, raw, cache)
	if err != nil {
		t.Fatal(err)
	}
	if md.GetName() != "pin-all" {
		t.Fatalf("sealed as %q", md.GetName())
	}
	dir := t.TempDir()
	if err := topologytest.Server2Socket4NodesInterleaved().Write(dir); err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	results, err := abicheck.Run(ctx, md.GetName(), sealed, topo, abicheck.WithConfig([]byte("reserved: 0-1\n")),
		abicheck.WithWasm(cache, wasm.WithLogger(logr.Discard())))
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Err(); err != nil {
		t.Fatal(err)
	}
}
