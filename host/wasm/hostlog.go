package wasm

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/tetratelabs/wazero/api"
	"golang.org/x/time/rate"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Verbosity of guest log levels in logr terms: errors go to Error, warnings to
// slog's Warn level (V(0) for a logger that is not slog's), info to V(2),
// debug to V(4). Every message carries "source"="policy", as a native Go
// policy's do (sdk/go/policy), so both log in one format.
const (
	logVerbosityInfo  = 2
	logVerbosityDebug = 4
	sourceKey         = "source"
	sourcePolicy      = "policy"
)

// Bounds on what a policy may log, through the log import and its output
// lines together (docs/security.md).
const (
	// MaxLogMessagesPerCall is the most messages one call may log; the rest
	// of the call's messages are dropped.
	MaxLogMessagesPerCall = 100
	// LogBytesPerSecond is the sustained rate of a policy's log, in bytes of
	// message text; LogBurstBytes may go at once.
	LogBytesPerSecond = 64 << 10
	LogBurstBytes     = 256 << 10
)

// logLimiter bounds a policy's log: messages per call and bytes per second.
// Calls are serialized by Policy, but a call's guest code and the host's
// bookkeeping run on one goroutine only between begin and end, so a mutex
// suffices.
type logLimiter struct {
	mu      sync.Mutex
	inCall  int // messages of the current call
	dropped int // messages of the current call dropped
	bytes   *rate.Limiter
	total   atomic.Uint64 // messages dropped since Load
}

func newLogLimiter() *logLimiter {
	return &logLimiter{bytes: rate.NewLimiter(rate.Limit(LogBytesPerSecond), LogBurstBytes)}
}

// allow reports whether a message of n bytes may be logged, and counts it.
func (l *logLimiter) allow(n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inCall++
	if l.inCall > MaxLogMessagesPerCall || !l.bytes.AllowN(time.Now(), n) {
		l.dropped++
		l.total.Add(1)
		return false
	}
	return true
}

// begin starts a call's count.
func (l *logLimiter) begin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inCall, l.dropped = 0, 0
}

// end logs, once, how many of the call's messages were dropped.
func (l *logLimiter) end(logger logr.Logger, method abi.Method) {
	l.mu.Lock()
	dropped := l.dropped
	l.inCall, l.dropped = 0, 0
	l.mu.Unlock()
	if dropped > 0 {
		logger.Info("policy log messages dropped", "method", method.Short(), "dropped", dropped,
			"limits", "100 messages a call, 64 KiB/s", "droppedTotal", l.total.Load())
	}
}

// hostLog implements the nriwasm.log import for one policy.
func hostLog(logger logr.Logger, limit *logLimiter) api.GoModuleFunc {
	warn := slog.New(logr.ToSlogHandler(logger))
	return func(ctx context.Context, mod api.Module, stack []uint64) {
		level := abi.LogLevel(api.DecodeI32(stack[0]))
		ptr, length := api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
		length = min(length, abi.MaxLogMessage)
		if !limit.allow(int(length)) {
			return
		}
		msg, ok := mod.Memory().Read(ptr, length)
		if !ok {
			logger.Info("policy logged from outside its memory", "ptr", ptr, "length", length)
			return
		}
		text := string(msg)
		switch level {
		case abi.LogLevel_LOG_LEVEL_ERROR:
			logger.Error(nil, text, sourceKey, sourcePolicy)
		case abi.LogLevel_LOG_LEVEL_WARN:
			warn.Log(ctx, slog.LevelWarn, text, sourceKey, sourcePolicy)
		case abi.LogLevel_LOG_LEVEL_DEBUG:
			logger.V(logVerbosityDebug).Info(text, sourceKey, sourcePolicy)
		default:
			logger.V(logVerbosityInfo).Info(text, sourceKey, sourcePolicy)
		}
	}
}
