package oci

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/oci/signature"
)

// DefaultTimeout bounds the exchange with the registry on a load: resolving
// the reference and downloading what the cache lacks.
const DefaultTimeout = time.Minute

// Option configures NewFetcher; a bad value is NewFetcher's error, naming the
// option (the host's one options style: host/RATIONALE.md).
type Option func(*options) error

type options struct {
	remote   Remote
	cacheDir string
	mode     signature.Mode
	verifier *signature.Verifier
	timeout  time.Duration
	logger   logr.Logger
}

func defaultOptions() options {
	return options{mode: signature.Off, timeout: DefaultTimeout, logger: logr.Discard()}
}

// WithRemote sets how registries are reached: plain HTTP, credentials, the
// HTTP client. Default: the zero Remote (HTTPS, anonymous, oras-go's
// retrying client). No PlainHTTP entry may be empty.
func WithRemote(r Remote) Option {
	return func(o *options) error {
		for i, host := range r.PlainHTTP {
			if host == "" {
				return fmt.Errorf("oci fetcher: remote: plain HTTP registry %d: empty", i)
			}
		}
		o.remote = r
		return nil
	}
}

// WithCacheDir sets the content-addressed cache, an OCI image layout in dir
// (created if missing). Default: an in-memory cache, for one-shot commands.
// dir must not be empty.
func WithCacheDir(dir string) Option {
	return func(o *options) error {
		if dir == "" {
			return errors.New("oci fetcher: cache directory: empty")
		}
		o.cacheDir = dir
		return nil
	}
}

// WithVerification sets what a missing or failing signature does (mode) and
// the verifier that checks signatures. Default signature.Off, no verifier.
// mode must be signature.Off, Warn or Enforce, and all but Off need a
// verifier.
func WithVerification(mode signature.Mode, v *signature.Verifier) Option {
	return func(o *options) error {
		if _, err := signature.ParseMode(string(mode)); err != nil {
			return fmt.Errorf("oci fetcher: %w", err)
		}
		if mode != signature.Off && v == nil {
			return fmt.Errorf("oci fetcher: verification mode %s needs at least one public key", mode)
		}
		o.mode, o.verifier = mode, v
		return nil
	}
}

// WithTimeout bounds the registry exchange of a load; past it the registry is
// taken as unreachable. Default DefaultTimeout. It must be positive.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("oci fetcher: timeout %v: must be positive", d)
		}
		o.timeout = d
		return nil
	}
}

// WithLogger sets the logger of resolutions, cache fallbacks and verification
// results; default: discard.
func WithLogger(l logr.Logger) Option {
	return func(o *options) error {
		if l.GetSink() == nil {
			l = logr.Discard()
		}
		o.logger = l
		return nil
	}
}
