// Package config reads, validates, compares and watches the configuration file
// of `nriwasm run`, the node agent.
//
// A file needs only the policy; every other field has a default:
//
//	policy:
//	  name: topology-aware       # a built-in policy, or a path to a .wasm module
//	  config:                    # handed to the policy as is, never interpreted
//	    reservedCPUs: "0-1"
//	dra:
//	  enabled: true
//
// Decoding is strict: an unknown field, a duplicate key or a value of the wrong
// type is an error that names the field by its path (policy.memoryLimit).
// Relative paths are resolved against the file's directory. See README.md in
// this directory for every field, and Watch for live changes: the policy's
// configuration applies live, the policy module and its limits by a swap,
// anything else needs a restart (Diff).
package config

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/nriwasm/nriwasm/host/oci/ref"
)

// Defaults of the fields.
const (
	DefaultMemoryLimit       Quantity      = 256 << 20
	DefaultCallTimeout       Duration      = Duration(time.Second)
	DefaultSocketPath                      = "/var/run/nri/nri.sock"
	DefaultPluginName                      = "nriwasm"
	DefaultPluginIndex       PluginIndex   = "90"
	DefaultOnPolicyFailure   FailurePolicy = FailOpen
	DefaultSysfs                           = "/sys"
	DefaultStateDir                        = "/var/lib/nriwasm"
	DefaultSeedDir                         = "/usr/lib/nriwasm/seed"
	DefaultMetricsAddress                  = ":9090"
	DefaultDRADomain                       = "nri.io"
	DefaultRegistrarDir                    = "/var/lib/kubelet/plugins_registry"
	DefaultCDIDir                          = "/var/run/cdi"
	DefaultRegistryTimeout   Duration      = Duration(time.Minute)
	DefaultVerification      Verification  = VerifyOff
	DefaultAvailableCPUs                   = AvailableOnline
	DefaultShadowQueueLength               = 1024
	DefaultShadowKeep                      = 100
	DefaultShadowMaxFailures               = 3
	DefaultRecordMaxSize     Quantity      = 64 << 20
	// KubeletPluginsDir holds each DRA driver's data directory by default.
	KubeletPluginsDir = "/var/lib/kubelet/plugins"
)

// DefaultSwapCheckInterval is policy.swap.checkInterval's default.
const DefaultSwapCheckInterval = Duration(10 * time.Minute)

// The symbolic values of Config.AvailableCPUs; anything else is a CPU list.
const (
	AvailableOnline = "online"
	AvailableCgroup = "cgroup"
)

// Config is the agent's configuration.
type Config struct {
	Policy Policy `json:"policy"`
	NRI    NRI    `json:"nri"`
	// The sysfs root topology is discovered from. Default "/sys".
	Sysfs string `json:"sysfs"`
	// The CPUs policies may hand out: "online" (every online CPU), "cgroup"
	// (the cpuset of the pods' cgroup, kubepods, as kubelet and systemd left
	// it) or a CPU list ("2-15"). Default "online".
	AvailableCPUs string `json:"availableCPUs"`
	// Where the agent keeps its checkpoint. Default "/var/lib/nriwasm".
	StateDir string   `json:"stateDir"`
	Metrics  Metrics  `json:"metrics"`
	DRA      DRA      `json:"dra"`
	Log      Log      `json:"log"`
	Registry Registry `json:"registry"`
	Record   Record   `json:"record"`
	Fleet    Fleet    `json:"fleet"`
}

// Fleet takes the policy and its configuration from the cluster's
// PolicyConfig objects (nriwasm.io, docs/fleet.md) instead of this file.
type Fleet struct {
	// Run the policy and configuration of the PolicyConfig that selects this
	// node (its group object, else the one named default), follow its changes
	// and report in its status. Without cluster access (dra.kubeconfig, the
	// service account or $KUBECONFIG), without the CRD or without an object
	// for the node, the file's policy runs (logged once). Default false.
	Enabled bool `json:"enabled"`
}

// Policy selects the policy module and how it runs.
type Policy struct {
	// A built-in policy's name (a DNS label, e.g. "topology-aware"), the path
	// of a .wasm module (any name ending in ".wasm" or holding a "/"), or an
	// OCI reference: oci://REGISTRY/REPOSITORY:TAG (or @sha256:DIGEST), or
	// oci-layout://PATH:TAG. Required.
	Name string `json:"name"`
	// The policy's own configuration, inline: a YAML/JSON object (passed on as
	// JSON) or a string (passed on verbatim). Default: none. Not with ConfigFile.
	Config RawConfig `json:"config,omitempty"`
	// A file holding the policy's configuration, passed on verbatim and watched
	// like this file. Default: none. Not with Config.
	ConfigFile string `json:"configFile,omitempty"`
	// The cap on the module's linear memory, a quantity ("256Mi", "1Gi") that is
	// a multiple of 64Ki between 64Ki and 4Gi. Default 256Mi.
	MemoryLimit Quantity `json:"memoryLimit"`
	// The deadline of every call into the policy, a duration ("1s", "500ms") that
	// must stay below NRI's 2s per request. Default 1s.
	CallTimeout Duration `json:"callTimeout"`
	// Where compiled modules are cached. Default "<stateDir>/cache".
	CacheDir string `json:"cacheDir,omitempty"`
	// A read-only seed of compiled code (nriwasm policy precompile), which the
	// agent's image carries: a policy not yet in cacheDir is copied from it
	// after its checks instead of compiled. A directory without a seed is
	// ignored. Default "/usr/lib/nriwasm/seed".
	SeedDir string `json:"seedDir,omitempty"`
	// A second policy run beside this one on the same requests, its answers
	// compared and never applied (docs/rollout.md). Default: none.
	Shadow *Shadow `json:"shadow,omitempty"`
	// How a live change of the policy module is checked (docs/rollout.md).
	Swap Swap `json:"swap"`

	// Data is what the policy receives in Init and Reconfigure: Config, or the
	// contents of ConfigFile. Filled by Complete (and so by Load).
	Data []byte `json:"-"`
}

// Shadow is the shadow policy (host/shadow): it receives every NRI event and
// claim call after the active policy answered; its answers are checked and
// compared with the active ones, never applied.
type Shadow struct {
	// A built-in policy's name, a .wasm path or an OCI reference, as
	// policy.name. Required.
	Name string `json:"name"`
	// The shadow policy's own configuration, inline, as policy.config.
	// Default: none. Not with ConfigFile.
	Config RawConfig `json:"config,omitempty"`
	// A file holding the shadow policy's configuration. Default: none. Not
	// with Config.
	ConfigFile string `json:"configFile,omitempty"`
	// The cap on the shadow module's linear memory. Default: policy.memoryLimit.
	MemoryLimit Quantity `json:"memoryLimit"`
	// The deadline of every call into the shadow. Default: policy.callTimeout.
	CallTimeout Duration `json:"callTimeout"`
	// How many requests wait for the shadow before it drops them and is
	// rebuilt from the active journal. Default 1024.
	QueueLength int `json:"queueLength"`
	// How many divergences /debug/shadow keeps, the newest. Default 100.
	Keep int `json:"keep"`
	// How many failed shadow calls (trap, deadline, out of memory) within 100
	// requests drop the shadow. Default 3.
	MaxFailures int `json:"maxFailures"`

	// Data is what the shadow receives in Init: Config, or the contents of
	// ConfigFile. Filled by Complete.
	Data []byte `json:"-"`
}

// Policy returns the shadow as a policy section: its name, configuration,
// limits and the running policy's cache directory, for loading it the way the
// active policy is loaded.
func (s *Shadow) Policy(active *Policy) *Policy {
	return &Policy{Name: s.Name, Config: s.Config, ConfigFile: s.ConfigFile, MemoryLimit: s.MemoryLimit,
		CallTimeout: s.CallTimeout, CacheDir: active.CacheDir, SeedDir: active.SeedDir, Data: s.Data}
}

// Record is the agent's record of requests and answers (host/record), the
// input of `nriwasm simulate --replay`.
type Record struct {
	// The most the record's files take together; the oldest file is deleted
	// past it. 0 keeps no record. Default 64Mi.
	MaxSize Quantity `json:"maxSize"`
	// Where the record's files are written. Default "<stateDir>/record".
	Dir string `json:"dir,omitempty"`
}

// Swap bounds a live policy swap: a change of policy.name (or of the digest
// an OCI tag resolves to), policy.memoryLimit or policy.callTimeout, or a
// policy configuration the running policy's Reconfigure refuses, loads the
// new policy beside the running one and switches only if its restore from
// the journal keeps the live containers where they are.
type Swap struct {
	// How many live containers the new policy's restore may move (a changed
	// cpuset or memory nodes); more, and the swap is refused and the running
	// policy stays. 0 to 10000. Default 0.
	MaxMoves int `json:"maxMoves"`
	// How often the agent resolves an OCI policy.name again and swaps when its
	// tag names another digest; 0 checks only when the configuration file
	// changes. 0, or 1m to 24h. Default 10m.
	CheckInterval Duration `json:"checkInterval"`
}

// NRI is the connection to the container runtime.
type NRI struct {
	// The runtime's NRI socket. Default "/var/run/nri/nri.sock".
	SocketPath string `json:"socketPath"`
	// The name the agent registers with. Default "nriwasm".
	PluginName string `json:"pluginName"`
	// Two digits that order the agent among NRI plugins. Default "90".
	PluginIndex PluginIndex `json:"pluginIndex"`
	// What CreateContainer does when the policy fails: "fail-open" starts the
	// container without the policy's adjustment, "fail-closed" fails its
	// creation with the policy's error. Default "fail-open".
	OnPolicyFailure FailurePolicy `json:"onPolicyFailure"`
}

// Metrics is the HTTP endpoint for /metrics, /healthz and /readyz.
type Metrics struct {
	// host:port to listen on. Default ":9090".
	Address string `json:"address"`
}

// DRA is the kubelet plugin that makes the policy's devices a DRA driver.
type DRA struct {
	// Serve DRA. Unset (the default) means off unless the policy's configuration
	// asks for DRA devices; false keeps it off whatever the policy asks.
	Enabled *bool `json:"enabled,omitempty"`
	// The driver is named "<policy>.<domain>". Default "nri.io".
	Domain string `json:"domain"`
	// The driver's data directory, where kubelet finds its socket. Default
	// "/var/lib/kubelet/plugins/<driver>".
	PluginDataDir string `json:"pluginDataDir,omitempty"`
	// kubelet's plugin registration directory. Default
	// "/var/lib/kubelet/plugins_registry".
	RegistrarDir string `json:"registrarDir"`
	// Where the claims' CDI specs are written, a directory the runtime reads.
	// Default "/var/run/cdi".
	CDIDir string `json:"cdiDir"`
	// A kubeconfig file for the API server. Empty: the in-cluster service
	// account, else $KUBECONFIG. Without cluster access DRA stays off (a
	// warning says why).
	Kubeconfig string `json:"kubeconfig,omitempty"`
}

// Log configures the agent's log.
type Log struct {
	// Verbosity from 0 (errors, warnings and key events) to 10. Default 0.
	Verbosity int `json:"verbosity"`
}

// Registry is how policies named by an OCI reference are pulled and checked.
type Registry struct {
	// Registries (host:port, as in references) reached over plain HTTP instead
	// of HTTPS. Default: none.
	PlainHTTP []string `json:"plainHTTP,omitempty"`
	// The content-addressed cache of pulled policies, an OCI image layout; the
	// agent starts from it when the registry is unreachable. Default
	// "<stateDir>/oci".
	CacheDir string `json:"cacheDir,omitempty"`
	// How long a start waits for the registry (resolving and downloading)
	// before it loads the cached copy. Default 1m.
	Timeout Duration `json:"timeout"`
	// What an unsigned module, or one whose signatures do not verify, does:
	// "off" (nothing is checked), "warn" (logged, loaded) or "enforce"
	// (refused). Default "off".
	Verification Verification `json:"verification"`
	// PEM public keys whose signatures are trusted; at least one for "warn" or
	// "enforce". Default: none.
	PublicKeys []string `json:"publicKeys,omitempty"`
}

// Verification is the signature verification mode of policies.
type Verification string

// The verification modes.
const (
	VerifyOff     Verification = "off"
	VerifyWarn    Verification = "warn"
	VerifyEnforce Verification = "enforce"
)

// Default returns a configuration with every default and no policy.
func Default() *Config {
	return &Config{
		Policy:        Policy{MemoryLimit: DefaultMemoryLimit, CallTimeout: DefaultCallTimeout, SeedDir: DefaultSeedDir, Swap: Swap{CheckInterval: DefaultSwapCheckInterval}},
		NRI:           NRI{SocketPath: DefaultSocketPath, PluginName: DefaultPluginName, PluginIndex: DefaultPluginIndex, OnPolicyFailure: DefaultOnPolicyFailure},
		Sysfs:         DefaultSysfs,
		AvailableCPUs: DefaultAvailableCPUs,
		StateDir:      DefaultStateDir,
		Metrics:       Metrics{Address: DefaultMetricsAddress},
		DRA:           DRA{Domain: DefaultDRADomain, RegistrarDir: DefaultRegistrarDir, CDIDir: DefaultCDIDir},
		Registry:      Registry{Timeout: DefaultRegistryTimeout, Verification: DefaultVerification},
		Record:        Record{MaxSize: DefaultRecordMaxSize},
	}
}

// DriverName returns the DRA driver's name for a policy: "<policy>.<domain>".
func (d *DRA) DriverName(policy string) string { return policy + "." + d.Domain }

// DataDir returns the driver's data directory: PluginDataDir, or its default.
func (d *DRA) DataDir(driver string) string {
	if d.PluginDataDir != "" {
		return d.PluginDataDir
	}
	return filepath.Join(KubeletPluginsDir, driver)
}

// IsPath reports whether Name is a module's path rather than a built-in name
// or an OCI reference.
func (p *Policy) IsPath() bool {
	return !p.IsOCI() && (strings.HasSuffix(p.Name, ".wasm") || strings.ContainsRune(p.Name, '/'))
}

// IsOCI reports whether Name is an OCI reference (oci:// or oci-layout://).
func (p *Policy) IsOCI() bool { return ref.IsReference(p.Name) }
