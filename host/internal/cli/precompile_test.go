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

// TestChildCompile: a policy in neither the cache nor the seed starts on the
// interpreter while a child process (the test binary run as nriwasm)
// compiles it; the policy then moves to the child's compiled code, read
// from its seed, not compiled by the agent. A child that cannot run is an
// error naming the binary (the policy stays on the interpreter and the
// compile is retried), and a policy the cache holds starts compiled, with no
// child.
func TestChildCompile(t *testing.T) {
	module, err := os.ReadFile(filepath.Join("..", "..", "wasm", "testdata", "conformance-rust.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Policy{CacheDir: t.TempDir(), SeedDir: filepath.Join(t.TempDir(), "none"), MemoryLimit: config.DefaultMemoryLimit, CallTimeout: config.DefaultCallTimeout}
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

	if _, _, err := childCompile(t.TempDir(), "/nonexistent/nriwasm", nil, logr.Discard())(ctx, module); err == nil || !strings.Contains(err.Error(), "/nonexistent/nriwasm") {
		t.Fatalf("a child that cannot run: error %v, want one naming the binary", err)
	}

	loaded, err := childCompiled("conformance", module, cfg, log)(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := loaded.(*wasm.Policy)
	defer p.Close(ctx)
	if p.Engine() != wasm.EngineInterpreter {
		t.Fatalf("engine %v, want the interpreter while the child compiles", p.Engine())
	}
	for err := range p.Compiling() {
		t.Fatalf("background compile: %v", err)
	}
	if moved, err := p.Promote(ctx); !moved || err != nil {
		t.Fatalf("Promote = %v, %v", moved, err)
	}
	if !logged("policy compiled in a child process") || !logged(`"source"="seed"`) {
		t.Fatalf("the agent compiled the policy itself: %v", logs)
	}

	// Now in the cache: compiled at once, no child.
	again, err := childCompiled("conformance", module, cfg, logr.Discard())(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close(ctx)
	if p := again.(*wasm.Policy); p.Engine() != wasm.EngineCompiler || p.Compiling() != nil {
		t.Fatalf("a cached policy: engine %v, compiling %v", p.Engine(), p.Compiling())
	}
}
