package policy

import (
	"fmt"
	"unicode/utf8"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Logger writes leveled messages to the host's log, tagged by the host with the
// policy's name. In a Wasm module it calls the host import nriwasm.log; natively it
// writes to log/slog's default logger. Messages longer than abi.MaxLogMessage
// bytes are cut by the host.
type Logger struct{}

// Log is the policy's logger.
var Log Logger

func (Logger) Debugf(format string, args ...any) { emit(abi.LogLevel_LOG_LEVEL_DEBUG, format, args) }
func (Logger) Infof(format string, args ...any)  { emit(abi.LogLevel_LOG_LEVEL_INFO, format, args) }
func (Logger) Warnf(format string, args ...any)  { emit(abi.LogLevel_LOG_LEVEL_WARN, format, args) }
func (Logger) Errorf(format string, args ...any) { emit(abi.LogLevel_LOG_LEVEL_ERROR, format, args) }

func emit(level abi.LogLevel, format string, args []any) {
	msg := fmt.Sprintf(format, args...)
	if len(msg) > abi.MaxLogMessage {
		n := abi.MaxLogMessage
		for n > 0 && !utf8.RuneStart(msg[n]) {
			n--
		}
		msg = msg[:n]
	}
	hostLog(level, msg)
}
