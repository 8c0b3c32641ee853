//go:build !wasip1

package policy

import (
	"context"
	"log/slog"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

var slogLevels = map[abi.LogLevel]slog.Level{
	abi.LogLevel_LOG_LEVEL_DEBUG: slog.LevelDebug,
	abi.LogLevel_LOG_LEVEL_INFO:  slog.LevelInfo,
	abi.LogLevel_LOG_LEVEL_WARN:  slog.LevelWarn,
	abi.LogLevel_LOG_LEVEL_ERROR: slog.LevelError,
}

func hostLog(level abi.LogLevel, msg string) {
	slog.Default().Log(context.Background(), slogLevels[level], msg, "source", "policy")
}
