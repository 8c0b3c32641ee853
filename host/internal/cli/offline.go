package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// policyFlags are the flags of the commands that run a policy off-line, without
// a runtime: check and simulate.
type policyFlags struct {
	policy    string
	sysfs     string
	cacheDir  string
	config    string
	policyLog string
	oci       ociFlags
}

func (f *policyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.policy, "policy", builtin.Default, "a built-in policy name, a .wasm file, or oci://REGISTRY/REPOSITORY:TAG (or @sha256:DIGEST)")
	f.registerInputs(fs)
}

// registerInputs registers every flag but --policy: for commands that take
// the policy as an argument.
func (f *policyFlags) registerInputs(fs *pflag.FlagSet) {
	fs.StringVar(&f.policyLog, "policy-log", "warn", "show the policy's own log messages from this level up: error, warn, info or debug")
	fs.StringVar(&f.sysfs, "sysfs", "", `the sysfs tree to read the topology from ("/sys" for this machine; default: the built-in reference 2-socket server)`)
	fs.StringVar(&f.cacheDir, "cache-dir", defaultCacheDir(), `cache directory: compiled code, and pulled oci:// policies in its "oci" folder ("" for none)`)
	fs.StringVar(&f.config, "config", "", "a policy configuration file")
	f.oci.register(fs)
}

// logLevel is the slog level of the handler that shows --policy-log's
// messages. A Wasm policy's info and debug messages arrive as logr's V(2)
// and V(4) (slog levels -2 and -4, host/wasm hostLog), a native Go policy's
// as slog's Info and Debug; warn keeps every message of the host at INFO.
func (f *policyFlags) logLevel() (slog.Level, error) {
	switch f.policyLog {
	case "error":
		return slog.LevelError, nil
	case "warn", "":
		return slog.LevelInfo, nil
	case "info":
		return slog.LevelInfo - 2, nil
	case "debug":
		return slog.LevelDebug, nil
	}
	return 0, fmt.Errorf("--policy-log %q: want error, warn, info or debug", f.policyLog)
}

// logHandler is a text handler on w at --policy-log's level.
func (f *policyFlags) logHandler(w io.Writer) (slog.Handler, error) {
	level, err := f.logLevel()
	if err != nil {
		return nil, err
	}
	return slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}), nil
}

// inputs reads the policy's configuration (nil without --config) and discovers
// the topology: from --sysfs, or the reference machine's without it.
func (f *policyFlags) inputs() ([]byte, *abi.Topology, error) {
	var config []byte
	if f.config != "" {
		var err error
		if config, err = os.ReadFile(f.config); err != nil {
			return nil, nil, fmt.Errorf("read policy config: %w", err)
		}
	}
	if f.sysfs == "" {
		topo, err := referenceTopology()
		return config, topo, err
	}
	topo, err := topology.Discover(f.sysfs)
	if err != nil {
		return nil, nil, err
	}
	return config, topo, nil
}

// machine names the machine inputs read: the reference machine, or the
// sysfs tree.
func (f *policyFlags) machine() string {
	if f.sysfs == "" {
		return referenceMachine
	}
	return "the sysfs tree " + f.sysfs
}

// wasmOptions are opts plus the compilation cache, when there is one.
func (f *policyFlags) wasmOptions(opts ...wasm.Option) []wasm.Option {
	if f.cacheDir != "" {
		opts = append(opts, wasm.WithCacheDir(f.cacheDir))
	}
	return opts
}
