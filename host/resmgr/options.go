package resmgr

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/metrics"
)

// Option configures New; a bad value is New's error, naming the option (the
// host's one options style: host/RATIONALE.md).
type Option func(*options) error

type options struct {
	nodeName      string
	driverName    string
	availableCPUs []uint32
	logger        logr.Logger
	metrics       *metrics.Metrics
	identity      Identity
	resolve       ResolveFunc
}

func defaultOptions() options {
	return options{logger: logr.Discard()}
}

// WithNodeName sets the Kubernetes node's name, sent in Init; default "".
func WithNodeName(name string) Option {
	return func(o *options) error { o.nodeName = name; return nil }
}

// WithDriverName sets the DRA driver's name, sent in Init; default "", which
// tells the policy that the user turned DRA off.
func WithDriverName(name string) Option {
	return func(o *options) error { o.driverName = name; return nil }
}

// WithAvailableCPUs restricts answers' cpusets to these online CPUs; default:
// every online CPU. The list must name at least one CPU.
func WithAvailableCPUs(cpus []uint32) Option {
	return func(o *options) error {
		if len(cpus) == 0 {
			return errors.New("resource manager: available CPUs: empty: must name at least one CPU")
		}
		o.availableCPUs = cpus
		return nil
	}
}

// WithLogger sets the manager's logger; default: discard.
func WithLogger(l logr.Logger) Option {
	return func(o *options) error {
		if l.GetSink() == nil {
			l = logr.Discard()
		}
		o.logger = l
		return nil
	}
}

// WithMetrics records calls, failures and the journal's size in m; default:
// none recorded.
func WithMetrics(m *metrics.Metrics) Option {
	return func(o *options) error {
		if m == nil {
			return errors.New("resource manager: metrics: nil")
		}
		o.metrics = m
		return nil
	}
}

// WithIdentity names the policy New's LoadFunc loads; it is recorded next to
// the checkpoint (state.PolicyFileName). Default: none recorded. Its
// Reference is required.
func WithIdentity(id Identity) Option {
	return func(o *options) error {
		if id.Reference == "" {
			return fmt.Errorf("resource manager: identity %q: reference is required", id.String())
		}
		o.identity = id
		return nil
	}
}

// WithResolve sets how a changed configuration's policy is resolved for a
// live swap (swap.go); default none: such a change needs a restart.
func WithResolve(f ResolveFunc) Option {
	return func(o *options) error {
		if f == nil {
			return errors.New("resource manager: resolve: nil")
		}
		o.resolve = f
		return nil
	}
}
