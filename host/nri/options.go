package nri

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/metrics"
)

// Defaults of the options.
const (
	// DefaultMinBackoff is the first wait after a failed connection attempt.
	DefaultMinBackoff = 100 * time.Millisecond
	// DefaultMaxBackoff caps the wait between connection attempts.
	DefaultMaxBackoff = 500 * time.Millisecond
)

// Option configures New; a bad value is New's error, naming the option (the
// host's one options style: host/RATIONALE.md).
type Option func(*options) error

type options struct {
	minBackoff, maxBackoff time.Duration
	logger                 logr.Logger
	metrics                *metrics.Metrics
	locator                Locator
	dialer                 func(socketPath string) (net.Conn, error)
}

func defaultOptions() options {
	return options{minBackoff: DefaultMinBackoff, maxBackoff: DefaultMaxBackoff, logger: logr.Discard()}
}

// WithBackoff bounds the wait between connection attempts: it starts at
// min, doubles after each failure up to max and starts over after a
// connection. max is how late the agent may notice that the runtime is back
// (new containers start without the policy until then), so it is short: a
// failed dial of a Unix socket costs microseconds. Defaults
// DefaultMinBackoff and DefaultMaxBackoff. min must be positive, and max at
// least min.
func WithBackoff(min, max time.Duration) Option {
	return func(o *options) error {
		if min <= 0 || max < min {
			return fmt.Errorf("nri plugin: backoff %v to %v: min must be positive and max at least min", min, max)
		}
		o.minBackoff, o.maxBackoff = min, max
		return nil
	}
}

// WithLogger sets the logger of the plugin and of the NRI stub; default:
// discard.
func WithLogger(l logr.Logger) Option {
	return func(o *options) error {
		if l.GetSink() == nil {
			l = logr.Discard()
		}
		o.logger = l
		return nil
	}
}

// WithMetrics counts connections in m; default: none counted.
func WithMetrics(m *metrics.Metrics) Option {
	return func(o *options) error {
		if m == nil {
			return errors.New("nri plugin: metrics: nil")
		}
		o.metrics = m
		return nil
	}
}

// WithLocator resolves where a new container's mounts and devices live
// (topology hints); default none: they cross without hints.
func WithLocator(l Locator) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("nri plugin: locator: nil")
		}
		o.locator = l
		return nil
	}
}

// WithDialer opens the connection to the socket instead of net.Dial (tests
// use it to cut connections as a runtime restart would); default net.Dial.
func WithDialer(dial func(socketPath string) (net.Conn, error)) Option {
	return func(o *options) error {
		if dial == nil {
			return errors.New("nri plugin: dialer: nil")
		}
		o.dialer = dial
		return nil
	}
}
