package config

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/host/oci/ref"
)

// Limits Validate enforces.
const (
	// MaxCallTimeout is NRI's timeout per request; policy.callTimeout must stay
	// below it.
	MaxCallTimeout = 2 * time.Second
	// MinCallTimeout is the shortest policy.callTimeout: below it a policy's
	// ordinary calls would fail at their deadline.
	MinCallTimeout = 10 * time.Millisecond
	// MinMemoryLimit, MaxMemoryLimit and the 64Ki page bound policy.memoryLimit.
	MinMemoryLimit Quantity = 64 << 10
	MaxMemoryLimit Quantity = 4 << 30
	wasmPage       Quantity = 64 << 10
	// MaxRegistryTimeout bounds registry.timeout.
	MaxRegistryTimeout = 10 * time.Minute
	// MaxShadowQueueLength, MaxShadowKeep and MaxShadowFailures bound
	// policy.shadow's queueLength, keep and maxFailures.
	MaxShadowQueueLength = 65536
	MaxShadowKeep        = 10000
	MaxShadowFailures    = 100
	// MinRecordSize is the smallest record.maxSize but 0: room for a few
	// files, each starting with a snapshot of the journal.
	MinRecordSize Quantity = 1 << 20
	// MaxSwapMoves bounds policy.swap.maxMoves.
	MaxSwapMoves = 10000
	// MinSwapCheckInterval and MaxSwapCheckInterval bound a non-zero
	// policy.swap.checkInterval.
	MinSwapCheckInterval = time.Minute
	MaxSwapCheckInterval = 24 * time.Hour
	// MaxVerbosity bounds log.verbosity.
	MaxVerbosity = 10
	// maxSocketPath is the longest Unix socket path (sun_path less its NUL).
	maxSocketPath = 107
	// maxDriverName is the longest DRA driver name (a DNS subdomain ≤ 63).
	maxDriverName = 63
)

var (
	dnsLabelRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	pluginNameRE   = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	pluginIndexRE  = regexp.MustCompile(`^[0-9]{2}$`)
)

// FieldError is a field's value outside its limits.
type FieldError struct {
	Field string // the path, e.g. "policy.callTimeout"
	Value any    // the value found
	Rule  string // the rule it breaks, e.g. "must be below 2s (NRI's timeout per request)"
}

func (e *FieldError) Error() string {
	switch v := e.Value.(type) {
	case string:
		if v == "" {
			return fmt.Sprintf("%s: %s", e.Field, e.Rule)
		}
		return fmt.Sprintf("%s: %q %s", e.Field, v, e.Rule)
	case PluginIndex, FailurePolicy, Verification:
		return fmt.Sprintf("%s: %q %s", e.Field, v, e.Rule)
	}
	return fmt.Sprintf("%s: %v %s", e.Field, e.Value, e.Rule)
}

// Validate checks every field against its limits; the error joins one
// *FieldError per field in error, in the order of the file.
func (c *Config) Validate() error {
	var errs []error
	check := func(ok bool, field string, value any, rule string, args ...any) {
		if !ok {
			errs = append(errs, &FieldError{Field: field, Value: value, Rule: fmt.Sprintf(rule, args...)})
		}
	}
	absPath := func(field, p string, required bool) {
		if p == "" {
			check(!required, field, p, "is required")
			return
		}
		check(filepath.IsAbs(p), field, p, "must be an absolute path")
	}

	p := &c.Policy
	validateName("policy.name", p, check, absPath)
	check(p.Config == nil || p.ConfigFile == "", "policy.configFile", p.ConfigFile, "cannot be set together with policy.config")
	absPath("policy.configFile", p.ConfigFile, false)
	check(p.MemoryLimit >= MinMemoryLimit && p.MemoryLimit <= MaxMemoryLimit && p.MemoryLimit%wasmPage == 0,
		"policy.memoryLimit", p.MemoryLimit, "must be a multiple of 64Ki between %v and %v", MinMemoryLimit, MaxMemoryLimit)
	check(time.Duration(p.CallTimeout) >= MinCallTimeout && time.Duration(p.CallTimeout) < MaxCallTimeout, "policy.callTimeout", p.CallTimeout,
		"must be at least %v (a policy's Init and a garbage collection take milliseconds) and below %v (NRI's timeout per request)", MinCallTimeout, MaxCallTimeout)
	absPath("policy.cacheDir", p.CacheDir, false)
	absPath("policy.seedDir", p.SeedDir, false)
	if sh := p.Shadow; sh != nil {
		validateShadow(sh.Policy(p), sh, check, absPath)
	}
	check(c.Record.MaxSize == 0 || c.Record.MaxSize >= MinRecordSize, "record.maxSize", c.Record.MaxSize, "must be 0 (no record) or at least %v", MinRecordSize)
	absPath("record.dir", c.Record.Dir, false)
	check(p.Swap.MaxMoves >= 0 && p.Swap.MaxMoves <= MaxSwapMoves, "policy.swap.maxMoves", p.Swap.MaxMoves, "must be between 0 and %d", MaxSwapMoves)
	if ci := time.Duration(p.Swap.CheckInterval); ci != 0 {
		check(ci >= MinSwapCheckInterval && ci <= MaxSwapCheckInterval, "policy.swap.checkInterval", p.Swap.CheckInterval,
			"must be 0 (check only on a configuration change) or between %v and %v", MinSwapCheckInterval, MaxSwapCheckInterval)
	}

	n := &c.NRI
	absPath("nri.socketPath", n.SocketPath, true)
	check(len(n.SocketPath) <= maxSocketPath, "nri.socketPath", n.SocketPath, "is %d bytes long, over the limit of %d for a Unix socket", len(n.SocketPath), maxSocketPath)
	check(len(n.PluginName) <= 63 && pluginNameRE.MatchString(n.PluginName), "nri.pluginName", n.PluginName,
		"must be 1 to 63 letters, digits, '.', '_' or '-', starting and ending with a letter or digit")
	check(pluginIndexRE.MatchString(string(n.PluginIndex)), "nri.pluginIndex", n.PluginIndex, "must be two digits, 00 to 99")
	check(n.OnPolicyFailure == FailOpen || n.OnPolicyFailure == FailClosed, "nri.onPolicyFailure", n.OnPolicyFailure,
		"must be %q or %q", FailOpen, FailClosed)

	absPath("sysfs", c.Sysfs, true)
	if v := c.AvailableCPUs; v != AvailableOnline && v != AvailableCgroup {
		_, err := cpuset.Parse(v)
		check(err == nil && v != "", "availableCPUs", v, "must be %q, %q or a CPU list such as \"2-15\"", AvailableOnline, AvailableCgroup)
	}
	absPath("stateDir", c.StateDir, true)
	check(validAddress(c.Metrics.Address), "metrics.address", c.Metrics.Address, "must be host:port with a numeric port (\":9090\")")

	d := &c.DRA
	check(len(d.Domain) <= maxDriverName-2 && dnsSubdomainRE.MatchString(d.Domain), "dra.domain", d.Domain,
		"must be a DNS subdomain of at most %d characters", maxDriverName-2)
	if name := d.DriverName(p.Name); p.Name != "" && !p.IsPath() && !p.IsOCI() && len(name) > maxDriverName {
		check(false, "dra.domain", d.Domain, "makes the driver name %q %d characters long, over the limit of %d", name, len(name), maxDriverName)
	}
	absPath("dra.pluginDataDir", d.PluginDataDir, false)
	absPath("dra.registrarDir", d.RegistrarDir, true)
	absPath("dra.cdiDir", d.CDIDir, true)
	absPath("dra.kubeconfig", d.Kubeconfig, false)
	validateRegistry(&c.Registry, check, absPath)
	check(c.Log.Verbosity >= 0 && c.Log.Verbosity <= MaxVerbosity, "log.verbosity", c.Log.Verbosity, "must be between 0 and %d", MaxVerbosity)
	return errors.Join(errs...)
}

// validateName checks a policy's name (field): a built-in name, an absolute
// .wasm path or an OCI reference.
func validateName(field string, p *Policy, check func(bool, string, any, string, ...any), absPath func(string, string, bool)) {
	check(p.Name != "", field, "", "is required: a built-in policy's name or a .wasm path")
	if p.Name != "" && p.IsOCI() {
		if r, err := ref.Parse(p.Name); err != nil {
			check(false, field, p.Name, "is not a valid OCI reference: %s", strings.TrimPrefix(err.Error(), fmt.Sprintf("%v %q: ", ref.ErrInvalid, p.Name)))
		} else if r.IsLayout() {
			check(filepath.IsAbs(r.Layout), field, p.Name, "must name an absolute layout path")
		}
	} else if p.Name != "" && p.IsPath() {
		absPath(field, p.Name, true)
	} else if p.Name != "" {
		check(len(p.Name) <= 63 && dnsLabelRE.MatchString(p.Name), field, p.Name,
			"must be a built-in policy's name (a DNS label) or a path ending in .wasm")
	}
}

// validateShadow checks policy.shadow (p is it as a policy section).
func validateShadow(p *Policy, sh *Shadow, check func(bool, string, any, string, ...any), absPath func(string, string, bool)) {
	validateName("policy.shadow.name", p, check, absPath)
	check(sh.Config == nil || sh.ConfigFile == "", "policy.shadow.configFile", sh.ConfigFile, "cannot be set together with policy.shadow.config")
	absPath("policy.shadow.configFile", sh.ConfigFile, false)
	check(sh.MemoryLimit >= MinMemoryLimit && sh.MemoryLimit <= MaxMemoryLimit && sh.MemoryLimit%wasmPage == 0,
		"policy.shadow.memoryLimit", sh.MemoryLimit, "must be a multiple of 64Ki between %v and %v", MinMemoryLimit, MaxMemoryLimit)
	check(time.Duration(sh.CallTimeout) >= MinCallTimeout && time.Duration(sh.CallTimeout) < MaxCallTimeout, "policy.shadow.callTimeout", sh.CallTimeout,
		"must be at least %v and below %v", MinCallTimeout, MaxCallTimeout)
	check(sh.QueueLength >= 1 && sh.QueueLength <= MaxShadowQueueLength, "policy.shadow.queueLength", sh.QueueLength, "must be between 1 and %d", MaxShadowQueueLength)
	check(sh.Keep >= 1 && sh.Keep <= MaxShadowKeep, "policy.shadow.keep", sh.Keep, "must be between 1 and %d", MaxShadowKeep)
	check(sh.MaxFailures >= 1 && sh.MaxFailures <= MaxShadowFailures, "policy.shadow.maxFailures", sh.MaxFailures, "must be between 1 and %d", MaxShadowFailures)
}

func validateRegistry(r *Registry, check func(bool, string, any, string, ...any), absPath func(string, string, bool)) {
	for i, h := range r.PlainHTTP {
		check(validRegistryHost(h), fmt.Sprintf("registry.plainHTTP[%d]", i), h, "must be a registry's host or host:port")
	}
	absPath("registry.cacheDir", r.CacheDir, false)
	check(r.Timeout > 0 && time.Duration(r.Timeout) <= MaxRegistryTimeout, "registry.timeout", r.Timeout, "must be positive and at most %v", MaxRegistryTimeout)
	check(r.Verification == VerifyOff || r.Verification == VerifyWarn || r.Verification == VerifyEnforce, "registry.verification", r.Verification,
		"must be %q, %q or %q", VerifyOff, VerifyWarn, VerifyEnforce)
	if r.Verification == VerifyWarn || r.Verification == VerifyEnforce {
		check(len(r.PublicKeys) > 0, "registry.publicKeys", "", "needs at least one key when registry.verification is %q", r.Verification)
	}
	for i, k := range r.PublicKeys {
		absPath(fmt.Sprintf("registry.publicKeys[%d]", i), k, true)
	}
}

// validRegistryHost reports whether h parses as the registry of a reference.
func validRegistryHost(h string) bool {
	_, err := ref.Parse("oci://" + h + "/x:y")
	return err == nil
}

func validAddress(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && n <= 65535
}
