package wasm_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// precompiler is a CompileFunc that compiles in this process with
// Precompile (the agent runs it in a child process), after failing its
// first fails calls and after release is closed.
type precompiler struct {
	fails   int
	release chan struct{}
	calls   atomic.Int32
}

func (pc *precompiler) compile(ctx context.Context, module []byte) (string, func(), error) {
	n := int(pc.calls.Add(1))
	if pc.release != nil {
		select {
		case <-pc.release:
		case <-ctx.Done():
			return "", nil, ctx.Err()
		}
	}
	if n <= pc.fails {
		return "", nil, fmt.Errorf("child process exited: attempt %d: no space left on device", n)
	}
	dir, err := os.MkdirTemp("", "nriwasm-bg-seed-")
	if err != nil {
		return "", nil, err
	}
	if err := wasm.Precompile(ctx, dir, map[string][]byte{"conformance": module}); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// TestInterpreterFirst: a module in neither cache nor seed starts on the
// interpreter and serves while the background compile runs; once the code
// is compiled, Promote moves the policy to it through the RestoreFunc, and
// the next start finds it in the cache.
func TestInterpreterFirst(t *testing.T) {
	ctx := context.Background()
	module := conformanceModule(t)
	cache := t.TempDir()
	pc := &precompiler{release: make(chan struct{})}
	p, client, restores := load(t, module, wasm.WithCacheDir(cache), wasm.WithBackgroundCompile(pc.compile))
	if p.Engine() != wasm.EngineInterpreter || p.Compiling() == nil {
		t.Fatalf("engine %v, compiling %v: want the interpreter while the module compiles", p.Engine(), p.Compiling())
	}
	resp, err := client.CreateContainer(ctx, createContainer("c1", "A", "1"))
	if err != nil || resp.GetAdjustment().GetCpusetCpus() != "0-1" {
		t.Fatalf("call on the interpreter = %v, %v", resp, err)
	}
	if moved, err := p.Promote(ctx); moved || err != nil {
		t.Fatalf("Promote before the compile = %v, %v; want nothing", moved, err)
	}
	close(pc.release)
	for err := range p.Compiling() {
		t.Fatalf("background compile failed: %v", err)
	}
	if p.Engine() != wasm.EngineInterpreter {
		t.Fatal("the policy moved before Promote")
	}
	if moved, err := p.Promote(ctx); !moved || err != nil {
		t.Fatalf("Promote = %v, %v; want moved", moved, err)
	}
	if p.Engine() != wasm.EngineCompiler || *restores != 2 {
		t.Fatalf("after Promote: engine %v, restores %d; want the compiler and the RestoreFunc run again", p.Engine(), *restores)
	}
	resp, err = client.CreateContainer(ctx, createContainer("c2", "A", "1"))
	if err != nil || resp.GetAdjustment().GetCpusetCpus() != "0-1" {
		t.Fatalf("call on the compiled code = %v, %v", resp, err)
	}
	if moved, _ := p.Promote(ctx); moved {
		t.Fatal("a second Promote moved again")
	}
	if wasm.NeedsCompile(cache, module) {
		t.Fatal("the background compile left nothing in the cache")
	}
	again, _, _ := load(t, module, wasm.WithCacheDir(cache), wasm.WithBackgroundCompile(pc.compile))
	if again.Engine() != wasm.EngineCompiler || again.Compiling() != nil || pc.calls.Load() != 1 {
		t.Fatalf("a cached module: engine %v, compiling %v, compiles %d; want it compiled at once", again.Engine(), again.Compiling(), pc.calls.Load())
	}
}

// TestBackgroundCompileFailuresAreRetried: each failure is reported with
// its reason and counted, the policy serves on the interpreter meanwhile,
// and the compile is tried again after the backoff until it succeeds.
func TestBackgroundCompileFailuresAreRetried(t *testing.T) {
	ctx := context.Background()
	pc := &precompiler{fails: 2}
	p, client, _ := load(t, conformanceModule(t), wasm.WithCacheDir(t.TempDir()), wasm.WithBackgroundCompile(pc.compile),
		wasm.WithCompileRetry(10*time.Millisecond, 20*time.Millisecond), wasm.WithLogger(logr.Discard()))
	var failures []error
	for err := range p.Compiling() {
		failures = append(failures, err)
		if _, err := client.Info(ctx, &abi.InfoRequest{}); err != nil {
			t.Fatalf("call on the interpreter after a failed compile: %v", err)
		}
	}
	if len(failures) != 2 || p.CompileFailures() != 2 || pc.calls.Load() != 3 {
		t.Fatalf("failures %v (counted %d), compiles %d; want 2 failures then a success", failures, p.CompileFailures(), pc.calls.Load())
	}
	if !strings.Contains(failures[1].Error(), "attempt 2: no space left on device") || !strings.Contains(failures[1].Error(), `policy "conformance": background compile`) {
		t.Fatalf("failure %q does not name the policy and the reason", failures[1])
	}
	if moved, err := p.Promote(ctx); !moved || err != nil {
		t.Fatalf("Promote after the retries = %v, %v", moved, err)
	}
}

// TestBackgroundCompileOfTheWrongSeedFails: a seed that does not hold the
// module is a failure, not a compile in the agent.
func TestBackgroundCompileOfTheWrongSeedFails(t *testing.T) {
	other := t.TempDir()
	if err := wasm.Precompile(context.Background(), other, map[string][]byte{"raw": rawGuest}); err != nil {
		t.Fatal(err)
	}
	wrong := func(context.Context, []byte) (string, func(), error) { return other, func() {}, nil }
	p, _, _ := load(t, conformanceModule(t), wasm.WithCacheDir(t.TempDir()), wasm.WithBackgroundCompile(wrong),
		wasm.WithCompileRetry(time.Hour, time.Hour), wasm.WithLogger(logr.Discard()))
	err := <-p.Compiling()
	if err == nil || !strings.Contains(err.Error(), "holds no compiled code of this module") {
		t.Fatalf("error = %v, want the seed refused", err)
	}
	if p.Engine() != wasm.EngineInterpreter {
		t.Fatal("the policy left the interpreter")
	}
}

// TestCloseStopsTheBackgroundCompile: Close cancels a compile under way
// and returns; Compiling is closed.
func TestCloseStopsTheBackgroundCompile(t *testing.T) {
	pc := &precompiler{release: make(chan struct{})}
	p, _, _ := load(t, conformanceModule(t), wasm.WithCacheDir(t.TempDir()), wasm.WithBackgroundCompile(pc.compile))
	done := make(chan error, 1)
	go func() { done <- p.Close(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for the background compile")
	}
	if _, open := <-p.Compiling(); open {
		t.Fatal("Compiling is still open after Close")
	}
	if moved, err := p.Promote(context.Background()); moved || err != nil {
		t.Fatalf("Promote after Close = %v, %v", moved, err)
	}
}

// TestBackgroundCompileNeedsACache: without WithCacheDir there is nowhere
// for the compiled code to land.
func TestBackgroundCompileNeedsACache(t *testing.T) {
	pc := &precompiler{}
	_, err := wasm.Load(context.Background(), "conformance", conformanceModule(t), wasm.WithBackgroundCompile(pc.compile))
	if err == nil || !strings.Contains(err.Error(), "WithCacheDir") {
		t.Fatalf("Load error = %v, want one naming WithCacheDir", err)
	}
}

// TestEnginesAgree runs topology-aware compiled and on the interpreter side
// by side through a scenario on the 144-CPU machine (exclusive, shared and
// best-effort containers, pods of two, removals) and requires equal
// answers to every call.
func TestEnginesAgree(t *testing.T) {
	module, ok := builtin.Module("topology-aware")
	if !ok {
		t.Fatal("policies/builtin lacks topology-aware.wasm: run make policies")
	}
	transports := map[wasm.Engine]abi.Transport{}
	for _, engine := range []wasm.Engine{wasm.EngineCompiler, wasm.EngineInterpreter} {
		// Answers are compared, not times: the call timeout leaves room for
		// the interpreter on a loaded machine and under the race detector.
		p, err := wasm.Load(context.Background(), "topology-aware", module, wasm.WithEngine(engine), wasm.WithCacheDir(sharedCache),
			wasm.WithCallTimeout(time.Minute), wasm.WithStartTimeout(time.Minute), wasm.WithLogger(logr.Discard()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close(context.Background()) })
		transports[engine] = p
	}
	calls := 0
	tee := policytest.Tee{TB: t, Want: transports[wasm.EngineCompiler], Got: transports[wasm.EngineInterpreter], Calls: &calls}
	rt, err := policytest.OpenOnMachine(t, tee, "Server4Socket144CPU", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		id := fmt.Sprintf("c%02d", i)
		switch i % 4 {
		case 0:
			rt.Create(policytest.Container(id, 2000).Limited(2000).Guaranteed())
		case 1:
			rt.Create(policytest.Container(id, 500))
		case 2:
			rt.Create(policytest.Container(id, 0).BestEffort())
		case 3:
			rt.Create(policytest.Container(id, 1500).Limited(3000).OfPod(fmt.Sprintf("pod-c%02d", i-1)))
		}
		if i%5 == 4 {
			rt.Remove(fmt.Sprintf("c%02d", i-3))
		}
	}
	if _, err := rt.Client.DumpState(context.Background(), &abi.DumpStateRequest{}); err != nil {
		t.Fatal(err)
	}
	if calls < 70 {
		t.Fatalf("%d calls compared, want the whole scenario", calls)
	}
}
