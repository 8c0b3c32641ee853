package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/internal/testkit"
)

// TestPolicyPrecompile writes a seed with the command and loads the policy
// from it with an empty cache: its code comes from the seed, not a compile.
func TestPolicyPrecompile(t *testing.T) {
	module := filepath.Join("..", "..", "wasm", "testdata", "conformance-rust.wasm")
	seed := filepath.Join(t.TempDir(), "seed")
	stdout, stderr, code := run(t, "policy", "precompile", "--out", seed, module)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	testkit.Equal(t, strings.TrimSpace(stdout), "precompiled 1 policies into "+seed)
	if _, err := os.Stat(filepath.Join(seed, wasm.SeedManifestName)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(module)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logs []string
	log := funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, args)
	}, funcr.Options{Verbosity: 1})
	ctx := context.Background()
	p, err := wasm.Load(ctx, "conformance", data, wasm.WithCacheDir(t.TempDir()), wasm.WithSeedDir(seed), wasm.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	p.Close(ctx)
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(logs, "\n"); !strings.Contains(got, `"source"="seed"`) {
		t.Fatalf("the policy's code did not come from the seed:\n%s", got)
	}

	_, stderr, code = run(t, "policy", "precompile", module)
	testkit.Equal(t, code != 0, true)
	if !strings.Contains(stderr, "--out: required") {
		t.Fatalf("stderr does not name the missing flag: %s", stderr)
	}
}

// TestChildSeed: a policy in neither the cache nor the seed is compiled by a
// child process (the test binary run as nriwasm), and the agent's own load
// then reads the child's output instead of compiling; a policy the cache
// holds starts no child; a child that cannot run leaves the compile to the
// agent, and says why.
func TestChildSeed(t *testing.T) {
	module, err := os.ReadFile(filepath.Join("..", "..", "wasm", "testdata", "conformance-rust.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Policy{CacheDir: t.TempDir(), SeedDir: filepath.Join(t.TempDir(), "none")}
	var mu sync.Mutex
	var logs []string
	log := funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, args)
	}, funcr.Options{Verbosity: 1})
	logged := func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(strings.Join(logs, "\n"), s)
	}
	ctx := context.Background()

	extra, cleanup := childSeed(ctx, cfg, "conformance", module, "/nonexistent/nriwasm", nil, log)
	testkit.Equal(t, len(extra), 0)
	cleanup()
	if !logged("compiling the policy in the agent instead") {
		t.Fatalf("a failed child is not logged: %v", logs)
	}

	extra, cleanup = childSeed(ctx, cfg, "conformance", module, os.Args[0], nil, log)
	testkit.Equal(t, len(extra), 1)
	p, err := wasm.Load(ctx, "conformance", module, append([]wasm.Option{wasm.WithCacheDir(cfg.CacheDir), wasm.WithLogger(log)}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	p.Close(ctx)
	cleanup()
	if !logged(`"source"="seed"`) {
		t.Fatalf("the agent compiled the policy itself: %v", logs)
	}

	// Now in the cache: no child.
	extra, cleanup = childSeed(ctx, cfg, "conformance", module, "/nonexistent/nriwasm", nil, logr.Discard())
	defer cleanup()
	testkit.Equal(t, len(extra), 0)
}
