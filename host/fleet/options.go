package fleet

import (
	"errors"
	"fmt"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
)

// Option configures New; a bad value is New's error, naming the option (the
// host's one options style: host/RATIONALE.md).
type Option func(*options) error

type options struct {
	running  Outcome
	started  *v1alpha1.PolicyConfig
	startErr error
	logger   logr.Logger
}

func defaultOptions() options {
	return options{logger: logr.Discard()}
}

// WithRunning sets the policy running when the agent starts (see Running);
// the status reports it until an object applies. Default: none named. Its
// Policy must be set and its Err nil.
func WithRunning(running Outcome) Option {
	return func(o *options) error {
		if running.Policy == "" || running.Err != nil {
			return fmt.Errorf("fleet: running %q (error %v): the policy must be named and the error nil", running.Policy, running.Err)
		}
		o.running = running
		return nil
	}
}

// WithStarted names the object and generation the running configuration came
// from (Initial), which is not applied again, and, when startErr is not nil,
// why its configuration did not start (the agent started with the local
// file's): reported until the object's next generation. Default: the
// configuration came from no object. obj must not be nil.
func WithStarted(obj *v1alpha1.PolicyConfig, startErr error) Option {
	return func(o *options) error {
		if obj == nil {
			return errors.New("fleet: started object: nil")
		}
		o.started, o.startErr = obj, startErr
		return nil
	}
}

// WithLogger sets the agent's logger; default: discard.
func WithLogger(l logr.Logger) Option {
	return func(o *options) error {
		if l.GetSink() == nil {
			l = logr.Discard()
		}
		o.logger = l
		return nil
	}
}
