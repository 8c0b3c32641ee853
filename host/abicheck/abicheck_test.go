package abicheck_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/abicheck"
	"github.com/nriwasm/nriwasm/host/abicheck/testdata/faulty"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/internal/builtintest"
	"github.com/nriwasm/nriwasm/internal/testkit"
	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/policies/netdev"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// cacheDir is one compilation cache for the test binary.
var cacheDir string

func TestMain(m *testing.M) {
	builtintest.MainWithCache(m, &cacheDir)
}

// desktop is an 8-CPU, one-socket machine's topology.
func desktop(t *testing.T) *abi.Topology {
	t.Helper()
	dir := t.TempDir()
	if err := topologytest.Desktop1Socket().Write(dir); err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// options are the tests' options: config ("" for the policy's default) and
// the shared compilation cache.
func options(config string) []abicheck.Option {
	o := []abicheck.Option{abicheck.WithWasm(wasm.WithCacheDir(cacheDir), wasm.WithLogger(logr.Discard()))}
	if config != "" {
		o = append(o, abicheck.WithConfig([]byte(config)))
	}
	return o
}

func nativeOf(newPolicy func() policy.Policy) func() (abi.Transport, error) {
	return func() (abi.Transport, error) { return native.New(newPolicy()) }
}

func readFixture(t *testing.T, path string) []byte {
	t.Helper()
	module, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run make policies", err)
	}
	return module
}

// faultyModule is the faulty policy's .wasm.
func faultyModule(t *testing.T) []byte {
	return readFixture(t, filepath.Join("testdata", "faulty.wasm"))
}

func builtinModule(name string) func(*testing.T) []byte {
	return func(t *testing.T) []byte { return builtintest.Module(t, name) }
}

// TestOurPoliciesPass: the built-in policies, netdev, the Rust conformance
// fixture and the faulty policy without a fault pass every check, the Go ones
// also against their native build.
func TestOurPoliciesPass(t *testing.T) {
	for _, tc := range []struct {
		name   string
		module func(*testing.T) []byte
		native func() policy.Policy
	}{
		{"conformance", builtinModule("conformance"), func() policy.Policy { return &conformance.Policy{} }},
		{"topology-aware", builtinModule("topology-aware"), func() policy.Policy { return topologyaware.New() }},
		{"balloons", builtinModule("balloons"), func() policy.Policy { return balloons.New() }},
		{"netdev", func(*testing.T) []byte { return netdev.Module }, nil},
		{"conformance-rust", func(t *testing.T) []byte {
			return readFixture(t, filepath.Join("..", "wasm", "testdata", "conformance-rust.wasm"))
		}, nil},
		{"faulty", faultyModule, func() policy.Policy { return &faulty.Policy{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options("")
			if tc.native != nil {
				o = append(o, abicheck.WithNative(nativeOf(tc.native)))
			}
			results, err := abicheck.Run(context.Background(), tc.name, tc.module(t), desktop(t), o...)
			if err != nil {
				t.Fatal(err)
			}
			if err := results.Err(); err != nil {
				t.Fatal(err)
			}
			want := []string{abicheck.Handshake, abicheck.Describe, abicheck.EmptyCalls, abicheck.Determinism,
				abicheck.RestoreAfterRebuild, abicheck.AnswersWithinLimits}
			if tc.native != nil {
				want = append(want, abicheck.Native)
			}
			var ran []string
			for _, r := range results {
				ran = append(ran, r.Check)
			}
			if !slices.Equal(ran, want) {
				t.Fatalf("ran %v, want %v", ran, want)
			}
		})
	}
}

// TestEnergyPerformancePreference: topology-aware passes every check on a
// machine whose CPUs' energy-performance preferences differ (ABI v1.4), as
// the host discovers it, playing the fidelity case whose containers prefer
// CPU priorities: an instance rebuilt from the journal before every call
// classifies the CPUs as the one that kept its state, and the Go build
// answers the same.
func TestEnergyPerformancePreference(t *testing.T) {
	dir := t.TempDir()
	if err := topologytest.N4C16EPP().Write(dir); err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.Cpus[4].GetEnergyPerformancePreference(); got != "performance" {
		t.Fatalf("cpu4's energy-performance preference %q, want performance", got)
	}
	scenario := readFixture(t, filepath.Join("..", "..", "policies", "topologyaware", "testdata", "fidelity", "n4c16-epp", "cpuprio-epp", "scenario.yaml"))
	o := append(options(""), abicheck.WithScenario(scenario), abicheck.WithNative(nativeOf(func() policy.Policy { return topologyaware.New() })))
	results, err := abicheck.Run(context.Background(), "topology-aware", builtintest.Module(t, "topology-aware"), topo, o...)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(results); n != 7 {
		t.Fatalf("%d checks ran, want 7 (Native included): %v", n, results)
	}
}

// patched returns module with the first occurrence of old replaced by new (of
// the same length).
func patched(t *testing.T, module []byte, old, new string) []byte {
	t.Helper()
	i := bytes.Index(module, []byte(old))
	if i < 0 || len(old) != len(new) {
		t.Fatalf("cannot patch %q into %q", old, new)
	}
	out := slices.Clone(module)
	copy(out[i:], new)
	return out
}

// TestEachCheckCatchesItsFault: a module that breaks one check fails that
// check alone, and the error names it.
func TestEachCheckCatchesItsFault(t *testing.T) {
	good := faultyModule(t)
	goldenOf := func(t *testing.T) []byte {
		// The report of a good run, with one decision changed.
		results, err := abicheck.Run(context.Background(), "faulty", good, desktop(t), options("")...)
		if err != nil || results.Err() != nil {
			t.Fatalf("good run: %v, %v", err, results.Err())
		}
		golden, err := abicheck.Report(context.Background(), "faulty", good, desktop(t), options("")...)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Replace(golden, []byte(`cpus: "1"`), []byte(`cpus: "7"`), 1)
	}
	for _, tc := range []struct {
		check  string
		module func(*testing.T) []byte
		config string
		opt    func(*testing.T) abicheck.Option
		want   string
	}{
		{check: abicheck.Handshake, want: `missing export "nriwasm_abi_version"`,
			module: func(t *testing.T) []byte { return patched(t, good, abi.ExportABIVersion, "nriwasm_abi_versioX") }},
		{check: abicheck.Describe, want: "not sealed",
			module: func(t *testing.T) []byte { return patched(t, good, abi.MetadataSection, "nriwasm.metadatX") }},
		{check: abicheck.EmptyCalls, config: "fault=nil-container", want: "an empty CreateContainer request"},
		{check: abicheck.Determinism, config: "fault=dump-calls", want: "DumpState differs"},
		{check: abicheck.RestoreAfterRebuild, config: "fault=forget", want: "rebuilt from the journal"},
		{check: abicheck.AnswersWithinLimits, config: "fault=huge-env", want: "CreateContainer"},
		{check: abicheck.Golden, want: `the golden file: "        cpus: \"7\""`,
			opt: func(t *testing.T) abicheck.Option { return abicheck.WithGolden(goldenOf(t)) }},
		{check: abicheck.Native, config: "fault=native-differs", want: "the native build",
			opt: func(*testing.T) abicheck.Option {
				return abicheck.WithNative(nativeOf(func() policy.Policy { return &faulty.Policy{} }))
			}},
	} {
		t.Run(tc.check, func(t *testing.T) {
			module := good
			if tc.module != nil {
				module = tc.module(t)
			}
			o := options(tc.config)
			if tc.opt != nil {
				o = append(o, tc.opt(t))
			}
			results, err := abicheck.Run(context.Background(), "faulty", module, desktop(t), o...)
			if err != nil {
				t.Fatal(err)
			}
			if failed := results.Failed(); !slices.Equal(failed, []string{tc.check}) {
				t.Fatalf("failed %v, want only %s: %v", failed, tc.check, results.Err())
			}
			msg := results.Err().Error()
			if !strings.HasPrefix(msg, tc.check+": ") || !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q does not name %s or lacks %q", msg, tc.check, tc.want)
			}
		})
	}
}

// TestBadOptions: a missing topology and a bad option value (a scenario that
// does not parse, an empty configuration) are the caller's errors, naming
// the input, not the module's.
func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		topo *abi.Topology
		opt  abicheck.Option
		want string
	}{
		{nil, abicheck.WithWasm(), "topology: nil"},
		{desktop(t), abicheck.WithScenario([]byte("steps: [{nope: {}}]")), "abicheck: scenario: "},
		{desktop(t), abicheck.WithConfig(nil), "config: empty"},
		{desktop(t), abicheck.WithGolden([]byte{}), "golden report: empty"},
		{desktop(t), abicheck.WithNative(nil), "native: nil"},
		{desktop(t), abicheck.WithWasm(wasm.WithLogger(logr.Discard()), nil), "wasm option 1: nil"},
	} {
		if _, err := abicheck.Run(context.Background(), "x", nil, tc.topo, tc.opt); err == nil {
			t.Errorf("Run succeeded; want an error with %q", tc.want)
		} else {
			testkit.ErrorContains(t, err, tc.want)
		}
		if _, err := abicheck.Report(context.Background(), "x", nil, tc.topo, tc.opt); err == nil {
			t.Errorf("Report succeeded; want an error with %q", tc.want)
		}
	}
}
