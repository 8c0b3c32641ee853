package record

import (
	"fmt"

	"github.com/go-logr/logr"
)

// DefaultQueue is how many exchanges wait for the writer by default.
const DefaultQueue = 4096

// Option configures NewWriter; a bad value is NewWriter's error, naming the
// option (the host's one options style: host/RATIONALE.md).
type Option func(*options) error

type options struct {
	queue  int
	logger logr.Logger
}

func defaultOptions() options {
	return options{queue: DefaultQueue, logger: logr.Discard()}
}

// WithQueue sets how many exchanges wait to be written before the writer
// drops them and starts a new file from a snapshot; default DefaultQueue. At
// least 1.
func WithQueue(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("record: queue %d: must be at least 1", n)
		}
		o.queue = n
		return nil
	}
}

// WithLogger sets the writer's logger; default: discard.
func WithLogger(l logr.Logger) Option {
	return func(o *options) error {
		if l.GetSink() == nil {
			l = logr.Discard()
		}
		o.logger = l
		return nil
	}
}
