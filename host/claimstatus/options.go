package claimstatus

import (
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

// Option configures New.
type Option func(*options)

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
func WithLogger(l logr.Logger) Option { return func(o *options) { o.logger = l } }

// WithBackoff sets the retry delays: base after the first failure of a
// claim, doubling up to max. Defaults DefaultBaseDelay and DefaultMaxDelay.
// Non-positive values keep the defaults.
func WithBackoff(base, max time.Duration) Option {
	return func(o *options) {
		if base > 0 {
			o.baseDelay = base
		}
		if max > 0 {
			o.maxDelay = max
		}
	}
}

// WithWorkers sets how many claims are written concurrently (one claim is
// never written by two workers at once); default DefaultWorkers. Values
// below 1 keep the default.
func WithWorkers(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.workers = n
		}
	}
}

// WithRequestTimeout bounds each apply; default DefaultRequestTimeout.
// Non-positive values keep the default.
func WithRequestTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.requestTimeout = d
		}
	}
}

// WithClock sets the clock for condition times and retry delays (tests);
// default the real clock.
func WithClock(c clock.WithTicker) Option { return func(o *options) { o.clock = c } }

// WithFailureFunc sets a function told about every failed apply (metrics,
// tests); default none.
func WithFailureFunc(f FailureFunc) Option { return func(o *options) { o.onFailure = f } }

// WithForbiddenRetries sets how often an apply refused with 403 Forbidden is
// retried before it is dropped and reported as final; default
// DefaultForbiddenRetries. 0 drops it at once; negative values keep the
// default.
func WithForbiddenRetries(n int) Option {
	return func(o *options) {
		if n >= 0 {
			o.forbiddenRetries = n
		}
	}
}
