package wasm

import (
	"context"

	"github.com/go-logr/logr"
	"github.com/tetratelabs/wazero/api"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Verbosity of guest log levels in logr terms: errors go to Error, warnings to
// V(0), info to V(2), debug to V(4).
const (
	logVerbosityInfo  = 2
	logVerbosityDebug = 4
)

// hostLog implements the nriwasm.log import for one policy.
func hostLog(logger logr.Logger) api.GoModuleFunc {
	return func(_ context.Context, mod api.Module, stack []uint64) {
		level := abi.LogLevel(api.DecodeI32(stack[0]))
		ptr, length := api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
		length = min(length, abi.MaxLogMessage)
		msg, ok := mod.Memory().Read(ptr, length)
		if !ok {
			logger.Info("policy logged from outside its memory", "ptr", ptr, "length", length)
			return
		}
		text := string(msg)
		switch level {
		case abi.LogLevel_LOG_LEVEL_ERROR:
			logger.Error(nil, text)
		case abi.LogLevel_LOG_LEVEL_WARN:
			logger.Info(text, "level", "warn")
		case abi.LogLevel_LOG_LEVEL_DEBUG:
			logger.V(logVerbosityDebug).Info(text)
		default:
			logger.V(logVerbosityInfo).Info(text)
		}
	}
}
