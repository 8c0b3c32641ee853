package nri

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
)

// stubLogger routes the NRI stub's log to logr: its debug and info messages at
// verbosity 2 and 1 (they narrate every connection), warnings and errors at 0.
type stubLogger struct{ log logr.Logger }

func (l stubLogger) Debugf(_ context.Context, format string, args ...any) {
	l.log.V(2).Info(fmt.Sprintf(format, args...))
}

func (l stubLogger) Infof(_ context.Context, format string, args ...any) {
	l.log.V(1).Info(fmt.Sprintf(format, args...))
}

func (l stubLogger) Warnf(_ context.Context, format string, args ...any) {
	l.log.Info("warning: " + fmt.Sprintf(format, args...))
}

func (l stubLogger) Errorf(_ context.Context, format string, args ...any) {
	l.log.Error(nil, fmt.Sprintf(format, args...))
}
