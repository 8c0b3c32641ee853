package wasm

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm/internal/interrupt"
)

// compiled is a policy module compiled in its own runtime, with the host modules
// it may import already instantiated there.
type compiled struct {
	runtime wazero.Runtime
	module  wazero.CompiledModule
	cache   *cache
	// source says where the machine code came from: compiled now, read from
	// the cache, or installed into the cache from the seed.
	source codeSource
	// instances maps the api.Module of each instrumented instance to its
	// *instance, for the poll import.
	instances sync.Map
}

func (c *compiled) close(ctx context.Context) error {
	return c.runtime.Close(ctx)
}

// compile prepares the module for instantiation: instrument it for deadlines,
// compile it (through the on-disk cache) or, with EngineInterpreter or for a
// module a background compile will bring (WithBackgroundCompile), prepare it
// for the interpreter; provide WASI, the host log and the interrupt poll
// imports, and check its exports and imports.
func compile(ctx context.Context, name string, code []byte, o *options, hostLog api.GoModuleFunc) (*compiled, error) {
	c := &compiled{}
	start := time.Now()
	if o.engine == EngineInterpreter {
		return c.interpret(ctx, name, code, o, hostLog)
	}
	// rel is the module's entry in the cache (instrumentedRel): a sha256
	// of the whole module, computed once, while the cache's files are
	// checked (openCache) on the other core.
	var rel string
	if o.cacheDir != "" {
		relc := make(chan string, 1)
		go func() { relc <- instrumentedRel(code) }()
		var err error
		c.cache, err = openCache(o.cacheDir, o.logger)
		rel = <-relc
		if err != nil {
			return nil, fmt.Errorf("policy %q: %w", name, err)
		}
	}
	seeded := ""
	if c.cache != nil && !c.cache.has(rel) {
		for _, dir := range o.seedDirs {
			if !seedAvailable(dir) {
				continue
			}
			err := c.cache.installSeed(dir, code)
			if err == nil {
				seeded = dir
				break
			}
			if errors.Is(err, errNoSeedEntry) {
				o.logger.V(1).Info("no compiled code in the seed for this module", "policy", name, "seed", dir)
			} else {
				o.logger.Info("not using the compiled-code seed", "policy", name, "seed", dir, "reason", err.Error())
			}
		}
	}
	if seeded == "" && o.background != nil && c.cache != nil && !c.cache.has(rel) {
		// Interpreter first: the compiled code comes later, from the
		// background compile (background.go).
		o.logger.Info("policy code not in the compilation cache nor a seed; starting on the interpreter while it compiles", "policy", name)
		return c.interpret(ctx, name, code, o, hostLog)
	}
	if o.interrupt == InterruptInstrumented {
		instrumented, err := c.instrument(code, rel)
		if err != nil {
			return nil, fmt.Errorf("policy %q: instrument module: %w", name, err)
		}
		code = instrumented
	}
	checked := time.Now()
	mod, rt, err := c.compileOnce(ctx, code, o, true)
	if err != nil && c.cache != nil {
		// The cache is at fault when the module compiles without it (an entry that
		// passed our checksums but was written by another wazero build, say): start
		// it afresh instead of keeping the policy down. An invalid module fails both
		// ways and leaves the cache alone.
		if _, plain, perr := c.compileOnce(ctx, code, o, false); perr == nil {
			_ = plain.Close(ctx)
			o.logger.Info("compilation cache unusable, rebuilding it", "policy", name, "dir", o.cacheDir, "err", err.Error())
			if rerr := c.cache.reset(); rerr != nil {
				return nil, fmt.Errorf("policy %q: reset compilation cache: %w", name, rerr)
			}
			mod, rt, err = c.compileOnce(ctx, code, o, true)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("policy %q: compile: %w", name, err)
	}
	c.runtime, c.module = rt, mod
	c.source = codeCompiled
	if c.cache != nil {
		n, err := c.cache.record()
		if err != nil {
			o.logger.Info("cannot record compilation cache checksums", "policy", name, "err", err.Error())
		}
		switch {
		case n == 0 && seeded != "":
			c.source = codeSeed
		case n == 0:
			c.source = codeCache
		case seeded != "":
			// Every check passed, yet wazero did not find the code under the
			// key it computed: keep the new entry, and say so.
			o.logger.Info("the compiled-code seed's entry was not used by wazero; the policy was compiled", "policy", name, "seed", seeded)
		}
	}
	// How long the cache's checks and the instrumentation took, and
	// wazero (its decoding and validation, then the compile or the read
	// of the cached code): where a start's time goes (docs/performance.md).
	o.logger.V(1).Info("policy code ready", "policy", name, "source", c.source.String(),
		"checks", checked.Sub(start).Round(10*time.Microsecond).String(),
		"wazero", time.Since(checked).Round(10*time.Microsecond).String())
	if err := c.finish(ctx, name, hostLog, o.interrupt); err != nil {
		return nil, err
	}
	return c, nil
}

// interpret prepares code for wazero's interpreter: instrumented for
// deadlines (not through the cache: only compiled code's entries belong
// there) and lowered to the interpreter's form, which takes a fraction of a
// compile's time and memory.
func (c *compiled) interpret(ctx context.Context, name string, code []byte, o *options, hostLog api.GoModuleFunc) (*compiled, error) {
	if o.interrupt == InterruptInstrumented {
		instrumented, _, err := interrupt.Instrument(code)
		if err != nil {
			return nil, fmt.Errorf("policy %q: instrument module: %w", name, err)
		}
		code = instrumented
	}
	cfg := wazero.NewRuntimeConfigInterpreter().
		WithMemoryLimitPages(uint32(o.memoryLimit / wasmPageSize)).
		WithCloseOnContextDone(o.interrupt == InterruptWazero)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	mod, err := rt.CompileModule(ctx, code)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("policy %q: compile for the interpreter: %w", name, err)
	}
	c.runtime, c.module, c.source = rt, mod, codeInterpreted
	o.logger.V(1).Info("policy code ready", "policy", name, "source", c.source.String())
	if err := c.finish(ctx, name, hostLog, o.interrupt); err != nil {
		return nil, err
	}
	return c, nil
}

// finish checks the module's exports and imports and provides the imports;
// on failure it closes the runtime.
func (c *compiled) finish(ctx context.Context, name string, hostLog api.GoModuleFunc, mode Interrupt) error {
	rt, mod := c.runtime, c.module
	if err := checkExports(mod, mode); err != nil {
		_ = rt.Close(ctx)
		return fmt.Errorf("policy %q: %w", name, err)
	}
	if err := checkImports(mod); err != nil {
		_ = rt.Close(ctx)
		return fmt.Errorf("policy %q: %w", name, err)
	}
	if err := provideImports(ctx, rt, hostLog, c.poll); err != nil {
		_ = rt.Close(ctx)
		return fmt.Errorf("policy %q: %w", name, err)
	}
	return nil
}

// instrument adds the deadline checks, through the cache when there is one
// (rel: code's entry there, instrumentedRel).
func (c *compiled) instrument(code []byte, rel string) ([]byte, error) {
	run := func(code []byte) ([]byte, error) {
		out, _, err := interrupt.Instrument(code)
		return out, err
	}
	if c.cache == nil {
		return run(code)
	}
	return c.cache.instrumented(rel, code, run)
}

func (c *compiled) compileOnce(ctx context.Context, code []byte, o *options, useCache bool) (wazero.CompiledModule, wazero.Runtime, error) {
	cfg := wazero.NewRuntimeConfigCompiler().
		WithMemoryLimitPages(uint32(o.memoryLimit / wasmPageSize)).
		WithCloseOnContextDone(o.interrupt == InterruptWazero)
	if useCache && c.cache != nil {
		cc, err := wazero.NewCompilationCacheWithDir(c.cache.wazeroDir())
		if err != nil {
			return nil, nil, fmt.Errorf("open compilation cache: %w", err)
		}
		cfg = cfg.WithCompilationCache(cc)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	mod, err := rt.CompileModule(experimental.WithCompilationWorkers(ctx, runtime.NumCPU()), code)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, nil, err
	}
	return mod, rt, nil
}

// codeSource is where a compiled module's machine code came from.
type codeSource int

const (
	codeCompiled    codeSource = iota // compiled by this Load
	codeCache                         // read from the compilation cache
	codeSeed                          // installed from the seed, then read
	codeInterpreted                   // run by wazero's interpreter, not compiled
)

func (s codeSource) String() string {
	switch s {
	case codeCache:
		return "cache"
	case codeSeed:
		return "seed"
	case codeInterpreted:
		return "interpreter"
	}
	return "compiled"
}

// signature is a function's parameter and result types.
type signature struct {
	params, results []api.ValueType
}

func (s signature) String() string {
	names := func(ts []api.ValueType) string {
		var parts []string
		for _, t := range ts {
			parts = append(parts, api.ValueTypeName(t))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("(%s) -> (%s)", names(s.params), names(s.results))
}

var i32, i64 = api.ValueTypeI32, api.ValueTypeI64

// requiredExports are the functions the calling convention needs.
var requiredExports = []struct {
	name string
	sig  signature
}{
	{abi.ExportABIVersion, signature{nil, []api.ValueType{i32}}},
	{abi.ExportRequestBuffer, signature{[]api.ValueType{i32}, []api.ValueType{i32}}},
	{abi.ExportCall, signature{[]api.ValueType{i32, i32}, []api.ValueType{i64}}},
}

func checkExports(mod wazero.CompiledModule, mode Interrupt) error {
	funcs := mod.ExportedFunctions()
	for _, want := range requiredExports {
		f, ok := funcs[want.name]
		if !ok {
			return fmt.Errorf("missing export %q %s: is the module built with an nriwasm SDK?", want.name, want.sig)
		}
		got := signature{f.ParamTypes(), f.ResultTypes()}
		if !slices.Equal(got.params, want.sig.params) || !slices.Equal(got.results, want.sig.results) {
			return fmt.Errorf("export %q has signature %s, want %s", want.name, got, want.sig)
		}
	}
	for _, name := range []string{abi.ExportInitialize, abi.ExportIdle} {
		if f, ok := funcs[name]; ok && (len(f.ParamTypes()) > 0 || len(f.ResultTypes()) > 0) {
			return fmt.Errorf("export %q must take and return nothing", name)
		}
	}
	if _, ok := mod.ExportedMemories()[abi.ExportMemory]; !ok {
		return fmt.Errorf("missing export %q: the module must export its linear memory", abi.ExportMemory)
	}
	return nil
}

// checkImports refuses any import the host does not provide, with a message
// that names it, instead of wazero's failure at instantiation.
func checkImports(mod wazero.CompiledModule) error {
	for _, f := range mod.ImportedFunctions() {
		module, name, _ := f.Import()
		switch {
		case module == wasi_snapshot_preview1.ModuleName:
		case module == interrupt.PollModule && name == interrupt.PollName:
			if len(f.ParamTypes()) > 0 || len(f.ResultTypes()) > 0 {
				return fmt.Errorf("import %s.%s has signature %s, want () -> ()", module, name, signature{f.ParamTypes(), f.ResultTypes()})
			}
		case module == abi.HostModule && name == abi.HostLog:
			want := signature{[]api.ValueType{i32, i32, i32}, nil}
			got := signature{f.ParamTypes(), f.ResultTypes()}
			if !slices.Equal(got.params, want.params) || len(got.results) > 0 {
				return fmt.Errorf("import %s.%s has signature %s, want %s", module, name, got, want)
			}
		default:
			return fmt.Errorf("imports %s.%s, which the host does not provide (only %s.* and %s.%s)",
				module, name, wasi_snapshot_preview1.ModuleName, abi.HostModule, abi.HostLog)
		}
	}
	for _, m := range mod.ImportedMemories() {
		module, name, _ := m.Import()
		return fmt.Errorf("imports memory %s.%s: a policy must define its own memory", module, name)
	}
	return nil
}

// provideImports instantiates WASI and the nriwasm host module: the log
// function and the interrupt poll (only called by instrumented modules).
func provideImports(ctx context.Context, rt wazero.Runtime, hostLog, poll api.GoModuleFunc) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fmt.Errorf("provide WASI: %w", err)
	}
	_, err := rt.NewHostModuleBuilder(abi.HostModule).
		NewFunctionBuilder().
		WithGoModuleFunction(hostLog, []api.ValueType{i32, i32, i32}, nil).
		WithParameterNames("level", "ptr", "length").
		Export(abi.HostLog).
		NewFunctionBuilder().
		WithGoModuleFunction(poll, nil, nil).
		Export(interrupt.PollName).
		Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("provide %s module: %w", abi.HostModule, err)
	}
	return nil
}
