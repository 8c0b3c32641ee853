package abicheck

import (
	"errors"
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/internal/scenario"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// Option configures Run and Report; a bad value is their error, naming the
// option (the host's one options style: host/RATIONALE.md).
type Option func(*options) error

type options struct {
	config []byte
	sc     *scenario.Scenario // nil: the bundled example
	golden []byte
	native func() (abi.Transport, error)
	wasm   []wasm.Option
}

// WithConfig sets the policy's configuration, sent in Init; default none:
// the policy's default. It must not be empty.
func WithConfig(config []byte) Option {
	return func(o *options) error {
		if len(config) == 0 {
			return errors.New("abicheck: config: empty (leave the option out for the policy's default)")
		}
		o.config = config
		return nil
	}
}

// WithScenario sets the scenario played, a scenario file as `nriwasm
// simulate --scenario` reads it (docs/simulate.md); default the bundled
// example. It must parse.
func WithScenario(data []byte) Option {
	return func(o *options) error {
		sc, err := scenario.Parse(data)
		if err != nil {
			return fmt.Errorf("abicheck: scenario: %w", err)
		}
		o.sc = sc
		return nil
	}
}

// WithGolden turns on the Golden check: the scenario's report must equal
// golden, YAML as `nriwasm simulate` prints it. Default: no Golden check.
// It must not be empty.
func WithGolden(golden []byte) Option {
	return func(o *options) error {
		if len(golden) == 0 {
			return errors.New("abicheck: golden report: empty")
		}
		o.golden = golden
		return nil
	}
}

// WithNative turns on the Native check: newRunner returns a fresh,
// uninitialized native build of the same policy (the Go SDK's
// native.Runner, say), whose report the module's must equal. Default: no
// Native check. It must not be nil.
func WithNative(newRunner func() (abi.Transport, error)) Option {
	return func(o *options) error {
		if newRunner == nil {
			return errors.New("abicheck: native: nil")
		}
		o.native = newRunner
		return nil
	}
}

// WithWasm adds options of every Load: a compilation cache, a logger,
// limits; the checks hold the module to the limits these set. Default none.
// No option may be nil.
func WithWasm(opts ...wasm.Option) Option {
	return func(o *options) error {
		for i, opt := range opts {
			if opt == nil {
				return fmt.Errorf("abicheck: wasm option %d: nil", i)
			}
		}
		o.wasm = append(o.wasm, opts...)
		return nil
	}
}
