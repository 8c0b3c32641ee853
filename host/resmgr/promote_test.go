package resmgr_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// TestInterpretedPolicyMovesToCompiledCode: the conformance module, in
// neither cache nor seed, serves on the interpreter while its compile fails
// once (counted) and is retried; once compiled, the manager moves it to the
// compiled code and the policy's state is the journal's (the pools it
// reports are those of the containers created on the interpreter).
func TestInterpretedPolicyMovesToCompiledCode(t *testing.T) {
	ctx := context.Background()
	module, ok := builtin.Module("conformance")
	if !ok {
		t.Fatal("policies/builtin lacks conformance.wasm: run make policies")
	}
	release := make(chan struct{})
	var compiles atomic.Int32
	compile := func(ctx context.Context, module []byte) (string, func(), error) {
		<-release
		if compiles.Add(1) == 1 {
			return "", nil, errors.New("child process killed")
		}
		dir, err := os.MkdirTemp("", "nriwasm-resmgr-seed-")
		if err != nil {
			return "", nil, err
		}
		if err := wasm.Precompile(ctx, dir, map[string][]byte{"conformance": module}); err != nil {
			return "", nil, err
		}
		return dir, func() { os.RemoveAll(dir) }, nil
	}
	cfg := config.Default()
	cfg.Policy.Name = "conformance"
	cfg.StateDir = t.TempDir()
	cfg.Policy.CacheDir, cfg.Policy.SeedDir = t.TempDir(), ""
	met := metrics.New()
	load := resmgr.WasmLoader("conformance", module, &cfg.Policy, logr.Discard(),
		wasm.WithBackgroundCompile(compile), wasm.WithCompileRetry(10*time.Millisecond, 10*time.Millisecond))
	m, err := resmgr.New(ctx, cfg, testTopology(), load, resmgr.WithNodeName("node-1"), resmgr.WithMetrics(met))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	gauge := func(want string) error {
		exp := "# HELP nriwasm_policy_interpreted 1 while the policy runs on wazero's interpreter because its compiled code is not ready yet (compiling in a child process; docs/agent.md), 0 on compiled code.\n# TYPE nriwasm_policy_interpreted gauge\nnriwasm_policy_interpreted " + want + "\n"
		return testutil.GatherAndCompare(met.Registry, strings.NewReader(exp), "nriwasm_policy_interpreted")
	}
	if err := gauge("1"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		pod, c := container(id, "0-1")
		if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
			t.Fatal(err)
		}
	}
	before, err := m.Pools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	// The compile runs in this process here (the agent's runs in a child):
	// minutes under -race on a loaded machine.
	deadline := time.Now().Add(10 * time.Minute)
	for gauge("0") != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the policy did not move to its compiled code in 10m: %v", gauge("0"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	failures := "# HELP nriwasm_policy_compile_failures_total Background compiles of the policy that failed; each is logged with its reason and tried again, the policy serving on the interpreter meanwhile.\n# TYPE nriwasm_policy_compile_failures_total counter\nnriwasm_policy_compile_failures_total 1\n"
	if err := testutil.GatherAndCompare(met.Registry, strings.NewReader(failures), "nriwasm_policy_compile_failures_total"); err != nil {
		t.Fatal(err)
	}
	after, err := m.Pools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(after, before, equalPool) || len(before) == 0 || len(before[0].Containers) == 0 {
		t.Fatalf("pools on the compiled code %+v, on the interpreter %+v: the state did not carry over", after, before)
	}
	pod, c := container("c", "2-3")
	if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
		t.Fatalf("a decision on the compiled code: %v", err)
	}
}
