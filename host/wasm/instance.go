package wasm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// instance is one instantiation of a policy module. It is not safe for
// concurrent use: Policy serializes calls.
type instance struct {
	name    string
	opts    *options
	logger  logr.Logger
	mod     api.Module
	mem     api.Memory
	call    api.Function
	reqBuf  api.Function
	stack   []uint64
	reqPtr  uint32
	reqCap  uint32
	out     *output
	version uint32
	// The deadline machinery of InterruptInstrumented (deadline.go).
	compiled  *compiled
	countdown api.MutableGlobal
	timer     *time.Timer
	mu        sync.Mutex  // orders the timer's and the poll's countdown writes
	fired     atomic.Bool // the timer ran: the current call is past its deadline
	// broken is set by a failure after which the instance must not be used.
	broken bool
	// idle is the optional nriwasm_idle export, nil if absent; idled: it
	// ran since the last call.
	idle  api.Function
	idled bool
}

// instantiate creates an instance, runs _initialize, and checks the ABI version.
func instantiate(ctx context.Context, name string, c *compiled, o *options, logger logr.Logger) (*instance, error) {
	// Start-up runs guest code (the start function, _initialize, the ABI
	// handshake) under its own deadline; the poll import and wazero's
	// close-on-done both stop a guest whose context is done.
	ctx, cancel := context.WithTimeout(ctx, o.startLimit)
	defer cancel()
	out := newOutput(o.outputLimit)
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStdout(out).
		WithStderr(out).
		WithStartFunctions()
	mod, err := c.runtime.InstantiateModule(experimental.WithMemoryAllocator(ctx, memoryAllocator), c.module, cfg)
	if err != nil {
		return nil, startError(ctx, name, "instantiate", o.startLimit, err, out)
	}
	in := &instance{
		name:   name,
		opts:   o,
		logger: logger,
		mod:    mod,
		mem:    mod.ExportedMemory(abi.ExportMemory),
		call:   mod.ExportedFunction(abi.ExportCall),
		reqBuf: mod.ExportedFunction(abi.ExportRequestBuffer),
		idle:   mod.ExportedFunction(abi.ExportIdle),
		stack:  make([]uint64, 2),
		out:    out,
	}
	if o.interrupt == InterruptInstrumented {
		if err := in.watch(c); err != nil {
			_ = mod.Close(ctx)
			return nil, err
		}
	}
	if err := in.start(ctx); err != nil {
		in.unwatch()
		_ = mod.Close(ctx)
		return nil, err
	}
	return in, nil
}

// startError describes a failure of step of an instance's start-up, as
// ErrDeadline when the start-up ran out of time or was cancelled.
func startError(ctx context.Context, name, step string, limit time.Duration, err error, out *output) error {
	if cause := ctx.Err(); cause != nil || errors.Is(err, errPastDeadline) {
		if cause == nil {
			cause = err
		}
		return fmt.Errorf("policy %q: %s: %w (start-up limit %v): %w%s", name, step, ErrDeadline, limit, cause, outputSuffix(out.take()))
	}
	return fmt.Errorf("policy %q: %s: %w%s", name, step, err, outputSuffix(out.take()))
}

func outputSuffix(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return ""
	}
	return "\nguest output:\n" + s
}

// start runs the reactor initializer and the version handshake.
func (in *instance) start(ctx context.Context) error {
	if init := in.mod.ExportedFunction(abi.ExportInitialize); init != nil {
		if _, err := init.Call(ctx); err != nil {
			return startError(ctx, in.name, abi.ExportInitialize, in.opts.startLimit, err, in.out)
		}
	}
	res, err := in.mod.ExportedFunction(abi.ExportABIVersion).Call(ctx)
	if err != nil {
		return startError(ctx, in.name, abi.ExportABIVersion, in.opts.startLimit, err, in.out)
	}
	in.version = api.DecodeU32(res[0])
	if major, minor := abi.SplitVersion(in.version); major != abi.ABIMajor {
		return fmt.Errorf("policy %q speaks ABI v%d.%d, this host speaks v%d.%d: rebuild the policy with an SDK for ABI v%d",
			in.name, major, minor, abi.ABIMajor, abi.ABIMinor, abi.ABIMajor)
	}
	return nil
}

func (in *instance) close(ctx context.Context) {
	in.unwatch()
	_ = in.mod.Close(ctx)
}

// do performs one call: marshal the request into the guest's buffer, call under
// a deadline, and decode the Response straight from guest memory.
func (in *instance) do(ctx context.Context, method abi.Method, req abi.Message) (*abi.Response, error) {
	timeout := in.opts.callTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if err := ctx.Err(); err != nil || timeout <= 0 {
		return nil, &CallError{Policy: in.name, Method: method, Kind: ErrDeadline, Err: context.DeadlineExceeded}
	}
	n := req.SizeVT()
	if err := in.writeRequest(ctx, method, req, n); err != nil {
		return nil, err
	}
	in.stack[0], in.stack[1] = uint64(method), uint64(n)
	in.idled = false
	in.opts.logs.begin()
	defer in.opts.logs.end(in.logger, method)
	err := in.invoke(ctx, in.call, timeout)
	output := in.out.take()
	if err != nil {
		in.broken = true
		kind := in.classify(err, output)
		if kind == ErrOutOfMemory {
			// One line instead of the guest runtime's dump of every goroutine.
			return nil, &CallError{Policy: in.name, Method: method, Kind: kind, Err: outOfMemory(in.opts.memoryLimit, output)}
		}
		return nil, &CallError{Policy: in.name, Method: method, Kind: kind, Err: err, Output: output}
	}
	in.logOutput(method, output)
	ptr, length := uint32(in.stack[0]>>32), uint32(in.stack[0])
	if uint64(length) > uint64(in.opts.responseLimit) {
		in.broken = true
		return nil, &CallError{Policy: in.name, Method: method, Kind: ErrMalformedResponse,
			Err: fmt.Errorf("response of %d bytes exceeds the limit of %d bytes", length, in.opts.responseLimit)}
	}
	raw, ok := in.mem.Read(ptr, length)
	if !ok {
		in.broken = true
		return nil, &CallError{Policy: in.name, Method: method, Kind: ErrMalformedResponse,
			Err: fmt.Errorf("response [%d, +%d) lies outside memory (%d bytes)", ptr, length, in.mem.Size())}
	}
	resp := &abi.Response{}
	if err := resp.UnmarshalVT(raw); err != nil {
		in.broken = true
		return nil, &CallError{Policy: in.name, Method: method, Kind: ErrMalformedResponse, Err: fmt.Errorf("decode response: %w", err)}
	}
	if resp.Result == nil {
		in.broken = true
		return nil, &CallError{Policy: in.name, Method: method, Kind: ErrMalformedResponse, Err: errors.New("response has no result")}
	}
	if err := checkResponse(resp); err != nil {
		in.broken = true
		return nil, &CallError{Policy: in.name, Method: method, Kind: ErrMalformedResponse, Err: err}
	}
	return resp, nil
}

// writeRequest marshals req into the guest's request buffer, asking for a
// larger one when it does not fit.
func (in *instance) writeRequest(ctx context.Context, method abi.Method, req abi.Message, n int) error {
	if n == 0 {
		return nil
	}
	if uint64(n) > uint64(in.reqCap) {
		if uint64(n) > uint64(in.opts.memoryLimit) {
			return &CallError{Policy: in.name, Method: method, Kind: ErrOutOfMemory,
				Err: fmt.Errorf("request of %d bytes exceeds the memory limit (%d bytes)", n, in.opts.memoryLimit)}
		}
		in.stack[0] = uint64(n)
		if err := in.invoke(ctx, in.reqBuf, in.opts.callTimeout); err != nil {
			output := in.out.take()
			in.broken = true
			return &CallError{Policy: in.name, Method: method, Kind: in.classify(err, output), Err: fmt.Errorf("%s: %w", abi.ExportRequestBuffer, err), Output: output}
		}
		in.reqPtr, in.reqCap = uint32(in.stack[0]), uint32(n)
	}
	buf, ok := in.mem.Read(in.reqPtr, uint32(n))
	if !ok {
		in.broken = true
		in.reqCap = 0
		return &CallError{Policy: in.name, Method: method, Kind: ErrMalformedResponse,
			Err: fmt.Errorf("%s returned [%d, +%d), outside memory (%d bytes)", abi.ExportRequestBuffer, in.reqPtr, n, in.mem.Size())}
	}
	if _, err := req.MarshalToSizedBufferVT(buf); err != nil {
		return fmt.Errorf("policy %q: %s: encode request: %w", in.name, method.Short(), err)
	}
	return nil
}

// logOutput passes what a successful call printed to the log, line by line.
func (in *instance) logOutput(method abi.Method, output string) {
	if output == "" {
		return
	}
	for line := range strings.SplitSeq(strings.TrimRight(output, "\n"), "\n") {
		if in.opts.logs.allow(len(line)) {
			in.logger.Info(line, "method", method.Short(), "stream", "output")
		}
	}
}
