package shadow

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/metrics"
)

// Defaults of the options.
const (
	// DefaultQueue is how many exchanges wait for the shadow by default.
	DefaultQueue = 1024
	// DefaultKeep is how many divergences the report keeps by default.
	DefaultKeep = 100
	// DefaultMaxFailures is how many failed shadow calls within
	// FailureWindow requests drop the shadow by default.
	DefaultMaxFailures = 3
)

// Option configures New; a bad value is New's error, naming the option (the
// host's one options style: host/RATIONALE.md).
type Option func(*options) error

type options struct {
	config      []byte
	nodeName    string
	driverName  string
	queue       int
	keep        int
	maxFailures int
	logger      logr.Logger
	metrics     *metrics.Metrics
}

func defaultOptions() options {
	return options{queue: DefaultQueue, keep: DefaultKeep, maxFailures: DefaultMaxFailures, logger: logr.Discard()}
}

// WithConfig sets the shadow policy's configuration, sent in its Init;
// default none: the policy's default.
func WithConfig(config []byte) Option {
	return func(o *options) error { o.config = config; return nil }
}

// WithNodeName sets the node's name, sent in Init as to the active policy;
// default "".
func WithNodeName(name string) Option {
	return func(o *options) error { o.nodeName = name; return nil }
}

// WithDriverName sets the DRA driver's name, sent in Init as to the active
// policy; default "": DRA is off.
func WithDriverName(name string) Option {
	return func(o *options) error { o.driverName = name; return nil }
}

// WithQueue sets how many exchanges wait for the shadow before it drops them
// and resynchronizes; default DefaultQueue. At least 1.
func WithQueue(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("shadow: queue %d: must be at least 1", n)
		}
		o.queue = n
		return nil
	}
}

// WithKeep sets how many divergences the report keeps, the newest; default
// DefaultKeep. At least 1.
func WithKeep(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("shadow: keep %d: must be at least 1", n)
		}
		o.keep = n
		return nil
	}
}

// WithMaxFailures sets how many failed shadow calls within FailureWindow
// requests drop the shadow; default DefaultMaxFailures. At least 1 and at
// most FailureWindow.
func WithMaxFailures(n int) Option {
	return func(o *options) error {
		if n < 1 || n > FailureWindow {
			return fmt.Errorf("shadow: max failures %d: must be between 1 and %d", n, FailureWindow)
		}
		o.maxFailures = n
		return nil
	}
}

// WithLogger sets the shadow's logger; default: discard.
func WithLogger(l logr.Logger) Option {
	return func(o *options) error {
		if l.GetSink() == nil {
			l = logr.Discard()
		}
		o.logger = l
		return nil
	}
}

// WithMetrics counts comparisons, divergences, resyncs and failures in m;
// default: none counted.
func WithMetrics(m *metrics.Metrics) Option {
	return func(o *options) error {
		if m == nil {
			return errors.New("shadow: metrics: nil")
		}
		o.metrics = m
		return nil
	}
}
