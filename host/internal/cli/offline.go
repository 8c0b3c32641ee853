package cli

import (
	"fmt"
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
	policy   string
	sysfs    string
	cacheDir string
	config   string
	oci      ociFlags
}

func (f *policyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.policy, "policy", builtin.Default, "a built-in policy name, a .wasm file, or oci://REGISTRY/REPOSITORY:TAG (or @sha256:DIGEST)")
	fs.StringVar(&f.sysfs, "sysfs", "", `the sysfs tree to read the topology from ("/sys" for this machine; default: the built-in reference 2-socket server)`)
	fs.StringVar(&f.cacheDir, "cache-dir", defaultCacheDir(), `cache directory: compiled code, and pulled oci:// policies in its "oci" folder ("" for none)`)
	fs.StringVar(&f.config, "config", "", "a policy configuration file")
	f.oci.register(fs)
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
