package wasm

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Defaults of the options.
const (
	// DefaultMemoryLimit caps a policy's linear memory.
	DefaultMemoryLimit = 256 << 20
	// DefaultCallTimeout bounds every call; NRI allows 2 s per request.
	DefaultCallTimeout = time.Second
	// DefaultStartTimeout bounds an instance's start-up (start function,
	// _initialize, ABI handshake); a Go guest's runtime start takes a few
	// milliseconds.
	DefaultStartTimeout = 5 * time.Second
	// DefaultIdleDelay is how long a policy must have had no call before
	// the host runs its idle work.
	DefaultIdleDelay = time.Millisecond
	// DefaultOutputLimit is how much of a call's stdout and stderr is kept.
	DefaultOutputLimit = 64 << 10
	// DefaultCompileRetry is the first wait before a failed background
	// compile (WithBackgroundCompile) is tried again; each failure doubles
	// it, up to DefaultCompileRetryMax.
	DefaultCompileRetry = time.Second
	// DefaultCompileRetryMax bounds the wait between background compiles.
	DefaultCompileRetryMax = 5 * time.Minute
)

// Engine selects how wazero runs a policy's code.
type Engine int

const (
	// EngineCompiler compiles the module to machine code before its first
	// call (through the cache of WithCacheDir). The default.
	EngineCompiler Engine = iota
	// EngineInterpreter runs the module on wazero's interpreter: no compile,
	// so a module is ready in a fraction of the time and memory, but its
	// calls are several times slower (docs/performance.md). The sandbox's
	// limits are the same (host/wasm/RATIONALE.md).
	EngineInterpreter
)

func (e Engine) String() string {
	switch e {
	case EngineCompiler:
		return "compiler"
	case EngineInterpreter:
		return "interpreter"
	}
	return fmt.Sprintf("Engine(%d)", int(e))
}

// wasmPageSize is the size of a Wasm memory page.
const wasmPageSize = 64 << 10

// Interrupt selects how a call's deadline is enforced.
type Interrupt int

const (
	// InterruptInstrumented rewrites the module so that every loop iteration
	// decrements a countdown global and, every 65536 iterations, calls a host
	// function that fails the call once it is past its deadline (the deadline
	// timer also zeroes the countdown, so the guest polls at once). A runaway
	// loop thus returns to Go regularly, where the runtime can preempt it for a
	// garbage collection. The default; it costs a few percent
	// (host/wasm/RATIONALE.md).
	InterruptInstrumented Interrupt = iota
	// InterruptWazero uses wazero's WithCloseOnContextDone: each loop iteration
	// checks in with Go, so the call stops at its deadline and the process can
	// always stop the world. It costs ~4.6× on a 1 KiB call.
	InterruptWazero
	// InterruptNone does not enforce deadlines: a runaway call hangs its caller.
	// Only for benchmarks and trusted modules.
	InterruptNone
)

func (i Interrupt) String() string {
	switch i {
	case InterruptInstrumented:
		return "instrumented"
	case InterruptWazero:
		return "wazero"
	case InterruptNone:
		return "none"
	}
	return fmt.Sprintf("Interrupt(%d)", int(i))
}

// RestoreFunc brings a fresh instance up to date before it serves calls: it runs
// on the first instance (in Load) and on every instance rebuilt after a failure,
// typically calling Init with the host's journal. t talks to that instance only.
type RestoreFunc func(ctx context.Context, t abi.Transport) error

// Option configures Load.
type Option func(*options) error

type options struct {
	cacheDir      string
	seedDirs      []string
	memoryLimit   uint64
	callTimeout   time.Duration
	startLimit    time.Duration
	responseLimit int
	outputLimit   int
	interrupt     Interrupt
	engine        Engine
	// background compiles a module in neither cache nor seed while the
	// policy runs on the interpreter (WithBackgroundCompile).
	background      CompileFunc
	retry, retryMax time.Duration
	idleDelay       time.Duration
	logger          logr.Logger
	restore         RestoreFunc
	// resealing skips the check of sealed metadata against Info (Seal).
	resealing bool
	// logs bounds the policy's log, shared by its instances.
	logs *logLimiter
}

func defaultOptions() options {
	return options{
		memoryLimit:   DefaultMemoryLimit,
		callTimeout:   DefaultCallTimeout,
		startLimit:    DefaultStartTimeout,
		responseLimit: DefaultResponseLimit,
		outputLimit:   DefaultOutputLimit,
		interrupt:     InterruptInstrumented,
		idleDelay:     DefaultIdleDelay,
		retry:         DefaultCompileRetry,
		retryMax:      DefaultCompileRetryMax,
		logs:          newLogLimiter(),
		logger:        logr.FromSlogHandler(slog.Default().Handler()),
	}
}

// WithCacheDir keeps compiled code in dir (created if missing), so a later Load
// of the same module skips compilation. A corrupt or stale cache is discarded and
// rebuilt, never fatal. Default: no on-disk cache.
func WithCacheDir(dir string) Option {
	return func(o *options) error {
		o.cacheDir = dir
		return nil
	}
}

// WithSeedDir reads compiled code from dir, a seed written by Precompile
// (typically read-only, in the agent's image), when the cache (WithCacheDir,
// required) does not hold the module yet: its files are copied into the
// cache after checking that the seed was built for this wazero build, CPU
// features and deadline instrumentation, and every file's sha256, so Load
// does not compile. Any mismatch or corruption is logged with its reason and
// the module is compiled as without a seed; a dir without a manifest is
// ignored. Given more than once, the seeds are tried in order. Default: none.
func WithSeedDir(dir string) Option {
	return func(o *options) error {
		o.seedDirs = append(o.seedDirs, dir)
		return nil
	}
}

// WithMemoryLimit caps the module's linear memory at limit bytes, a multiple of
// 64 KiB between 64 KiB and 4 GiB. Default DefaultMemoryLimit (256 MiB).
func WithMemoryLimit(limit uint64) Option {
	return func(o *options) error {
		if limit < wasmPageSize || limit > 1<<32 || limit%wasmPageSize != 0 {
			return fmt.Errorf("memory limit %d: must be a multiple of 64 KiB between 64 KiB and 4 GiB", limit)
		}
		o.memoryLimit = limit
		return nil
	}
}

// WithCallTimeout bounds every call; a context deadline that comes sooner wins.
// Default DefaultCallTimeout (1 s).
func WithCallTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("call timeout %v: must be positive", d)
		}
		o.callTimeout = d
		return nil
	}
}

// WithStartTimeout bounds the start-up of every instance: the module's start
// function, _initialize and the ABI version handshake, together. A context
// deadline that comes sooner wins. Default DefaultStartTimeout (5 s).
func WithStartTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("start timeout %v: must be positive", d)
		}
		o.startLimit = d
		return nil
	}
}

// WithResponseLimit caps the encoded size of one answer at limit bytes; a
// larger one fails the call with ErrMalformedResponse before it is decoded.
// Default DefaultResponseLimit (4 MiB).
func WithResponseLimit(limit int) Option {
	return func(o *options) error {
		if limit <= 0 {
			return fmt.Errorf("response limit %d: must be positive", limit)
		}
		o.responseLimit = limit
		return nil
	}
}

// WithOutputLimit keeps at most limit bytes of a call's stdout and stderr (the
// latest ones). Default DefaultOutputLimit (64 KiB).
func WithOutputLimit(limit int) Option {
	return func(o *options) error {
		if limit <= 0 {
			return fmt.Errorf("output limit %d: must be positive", limit)
		}
		o.outputLimit = limit
		return nil
	}
}

// WithInterrupt selects how deadlines are enforced. Default InterruptInstrumented.
func WithInterrupt(i Interrupt) Option {
	return func(o *options) error {
		if i < InterruptInstrumented || i > InterruptNone {
			return fmt.Errorf("interrupt mode %d: unknown", int(i))
		}
		o.interrupt = i
		return nil
	}
}

// WithIdleDelay sets how long after its last call a policy that exports
// nriwasm_idle gets its idle work done (Policy.Idle); 0 leaves it to explicit
// Policy.Idle calls. Default DefaultIdleDelay (1 ms).
func WithIdleDelay(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("idle delay %v: must not be negative", d)
		}
		o.idleDelay = d
		return nil
	}
}

// WithLogger receives the policy's log messages and output, tagged with
// "policy"=name. Default: log/slog's default logger.
func WithLogger(l logr.Logger) Option {
	return func(o *options) error {
		o.logger = l
		return nil
	}
}

// WithRestore sets the hook that prepares every new instance. Default: none.
func WithRestore(f RestoreFunc) Option {
	return func(o *options) error {
		o.restore = f
		return nil
	}
}

// WithEngine selects how the module's code runs. Default EngineCompiler.
func WithEngine(e Engine) Option {
	return func(o *options) error {
		if e < EngineCompiler || e > EngineInterpreter {
			return fmt.Errorf("engine %d: unknown", int(e))
		}
		o.engine = e
		return nil
	}
}

// CompileFunc compiles module outside the agent's memory (a child process
// running Precompile) into a seed directory, and returns that directory and
// a function that removes it. It is called again after a failure.
type CompileFunc func(ctx context.Context, module []byte) (seedDir string, cleanup func(), err error)

// WithBackgroundCompile starts a module that is in neither the cache
// (WithCacheDir, required) nor a seed (WithSeedDir) at once on wazero's
// interpreter, and has f compile it meanwhile. When f's seed is installed
// into the cache the compiled code waits for Policy.Promote, which moves the
// policy to it. A failed compile is logged with its reason, counted
// (Policy.CompileFailures, Policy.Compiling) and tried again after
// WithCompileRetry's backoff; the policy serves on the interpreter
// meanwhile. A module the cache or a seed holds starts compiled, as
// without the option. Default: none (Load compiles before it returns).
func WithBackgroundCompile(f CompileFunc) Option {
	return func(o *options) error {
		if f == nil {
			return fmt.Errorf("background compile: nil function")
		}
		o.background = f
		return nil
	}
}

// WithCompileRetry sets the backoff of a failed background compile
// (WithBackgroundCompile): first wait first, doubled after each failure, up
// to max. Default DefaultCompileRetry (1 s) to DefaultCompileRetryMax (5 min).
func WithCompileRetry(first, max time.Duration) Option {
	return func(o *options) error {
		if first <= 0 || max < first {
			return fmt.Errorf("compile retry %v to %v: the first wait must be positive and at most the longest", first, max)
		}
		o.retry, o.retryMax = first, max
		return nil
	}
}
