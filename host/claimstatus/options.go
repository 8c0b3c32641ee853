package claimstatus

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// Defaults of the options.
const (
	// DefaultBaseDelay is the first retry's delay after a failed apply; it
	// doubles with every further failure of the same claim.
	DefaultBaseDelay = 200 * time.Millisecond
	// DefaultMaxDelay caps the retry delay.
	DefaultMaxDelay = 30 * time.Second
	// DefaultWorkers is how many claims are written at the same time.
	DefaultWorkers = 2
	// DefaultRequestTimeout bounds each apply, so that a hung connection
	// does not hold a worker.
	DefaultRequestTimeout = 15 * time.Second
	// DefaultForbiddenRetries is how often an apply refused with 403
	// Forbidden is retried before it is dropped: an API server that has
	// just started answers 403 until its RBAC caches are filled (seen for
	// about a second with kube-apiserver 1.37). With the default backoff
	// that is about 50 s.
	DefaultForbiddenRetries = 8
)

// Option configures New; a bad value is New's error, naming the option (the
// host's one options style: host/RATIONALE.md).
type Option func(*options) error

// FailureFunc is told about every failed apply: retry says whether the
// claim's write will be tried again (the API server was away or busy) or
// was dropped (it refused the write for good, e.g. Forbidden or Invalid).
// It runs on a worker: keep it short.
type FailureFunc func(claim ClaimRef, err error, retry bool)

type options struct {
	logger           logr.Logger
	baseDelay        time.Duration
	maxDelay         time.Duration
	workers          int
	requestTimeout   time.Duration
	forbiddenRetries int
	clock            clock.WithTicker
	onFailure        FailureFunc
}

func defaultOptions() options {
	return options{
		logger:           logr.Discard(),
		baseDelay:        DefaultBaseDelay,
		maxDelay:         DefaultMaxDelay,
		workers:          DefaultWorkers,
		requestTimeout:   DefaultRequestTimeout,
		forbiddenRetries: DefaultForbiddenRetries,
		clock:            clock.RealClock{},
	}
}

// WithLogger sets the logger; default: discard. Failed applies are logged
// as errors, retries at V(1).
func WithLogger(l logr.Logger) Option { return func(o *options) error { o.logger = l; return nil } }

// WithBackoff sets the retry delays: base after the first failure of a
// claim, doubling up to max. Defaults DefaultBaseDelay and DefaultMaxDelay.
// Both must be positive, and max at least base.
func WithBackoff(base, max time.Duration) Option {
	return func(o *options) error {
		if base <= 0 || max < base {
			return fmt.Errorf("claimstatus: backoff %v to %v: base must be positive and max at least base", base, max)
		}
		o.baseDelay, o.maxDelay = base, max
		return nil
	}
}

// WithWorkers sets how many claims are written concurrently (one claim is
// never written by two workers at once); default DefaultWorkers. At least
// 1.
func WithWorkers(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("claimstatus: workers %d: must be at least 1", n)
		}
		o.workers = n
		return nil
	}
}

// WithRequestTimeout bounds each apply; default DefaultRequestTimeout.
// It must be positive.
func WithRequestTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("claimstatus: request timeout %v: must be positive", d)
		}
		o.requestTimeout = d
		return nil
	}
}

// WithClock sets the clock for condition times and retry delays (tests);
// default the real clock.
func WithClock(c clock.WithTicker) Option {
	return func(o *options) error {
		if c == nil {
			return errors.New("claimstatus: clock: nil")
		}
		o.clock = c
		return nil
	}
}

// WithFailureFunc sets a function told about every failed apply (metrics,
// tests); default none.
func WithFailureFunc(f FailureFunc) Option {
	return func(o *options) error { o.onFailure = f; return nil }
}

// WithForbiddenRetries sets how often an apply refused with 403 Forbidden is
// retried before it is dropped and reported as final; default
// DefaultForbiddenRetries. 0 drops it at once; it must not be negative.
func WithForbiddenRetries(n int) Option {
	return func(o *options) error {
		if n < 0 {
			return fmt.Errorf("claimstatus: forbidden retries %d: must not be negative", n)
		}
		o.forbiddenRetries = n
		return nil
	}
}
