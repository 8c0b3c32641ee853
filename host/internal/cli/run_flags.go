package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/oci/ref"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// runFlags are run's flags: the configuration file and the fields they
// override.
type runFlags struct {
	config         string
	policy         string
	nriSocket      string
	sysfs          string
	stateDir       string
	metricsAddress string
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "the configuration file (YAML); watched for live changes. Default: every field's default")
	fl.StringVar(&f.policy, "policy", "", "overrides policy.name: a built-in policy, a .wasm file or oci://REGISTRY/REPOSITORY:TAG (default "+builtin.Default+" without a file)")
	fl.StringVar(&f.nriSocket, "nri-socket", "", "overrides nri.socketPath (default "+config.DefaultSocketPath+")")
	fl.StringVar(&f.sysfs, "sysfs", "", "overrides sysfs, the root topology is read from (default "+config.DefaultSysfs+")")
	fl.StringVar(&f.stateDir, "state-dir", "", "overrides stateDir, where the checkpoint, the caches and the record are kept (default "+config.DefaultStateDir+")")
	fl.StringVar(&f.metricsAddress, "metrics-address", "", "overrides metrics.address, host:port of /metrics, /healthz, /readyz (default "+config.DefaultMetricsAddress+")")
}

// load reads the configuration file (or takes the defaults and the built-in
// default policy) and applies the flags.
func (f *runFlags) load() (*config.Config, error) {
	var cfg *config.Config
	if f.config != "" {
		var err error
		if cfg, err = config.Load(f.config); err != nil {
			return nil, err
		}
	} else {
		cfg = config.Default()
		cfg.Policy.Name = builtin.Default
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		if err := cfg.Complete(wd); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	if err := f.override(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// override applies the flags to a completed configuration (the first one and
// every one the watch reloads, so that Diff sees only the file's changes) and
// validates the result. Paths are relative to the working directory; a
// policy.cacheDir, registry.cacheDir or record.dir left at its default
// follows --state-dir.
func (f *runFlags) override(cfg *config.Config) error {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	if f.policy != "" {
		cfg.Policy.Name = f.policy
		if cfg.Policy.IsPath() {
			cfg.Policy.Name = abs(f.policy)
		}
		if r, err := ref.Parse(f.policy); err == nil && r.IsLayout() {
			r.Layout = abs(r.Layout)
			cfg.Policy.Name = r.String()
		}
	}
	if f.nriSocket != "" {
		cfg.NRI.SocketPath = abs(f.nriSocket)
	}
	if f.sysfs != "" {
		cfg.Sysfs = abs(f.sysfs)
	}
	if f.stateDir != "" {
		if cfg.Policy.CacheDir == filepath.Join(cfg.StateDir, "cache") {
			cfg.Policy.CacheDir = filepath.Join(abs(f.stateDir), "cache")
		}
		if cfg.Registry.CacheDir == filepath.Join(cfg.StateDir, "oci") {
			cfg.Registry.CacheDir = filepath.Join(abs(f.stateDir), "oci")
		}
		if cfg.Record.Dir == filepath.Join(cfg.StateDir, "record") {
			cfg.Record.Dir = filepath.Join(abs(f.stateDir), "record")
		}
		cfg.StateDir = abs(f.stateDir)
	}
	if f.metricsAddress != "" {
		cfg.Metrics.Address = f.metricsAddress
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}
