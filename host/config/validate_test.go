package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

func valid() *Config {
	c := Default()
	c.Policy.Name = "topology-aware"
	return c
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(c *Config)
		want   string // "" for valid
		detail string
	}{
		{"defaults", func(c *Config) {}, "", ""},
		{"wasm path", func(c *Config) { c.Policy.Name = "/opt/p.wasm" }, "", ""},
		{"relative wasm path", func(c *Config) { c.Policy.Name = "p.wasm" }, "policy.name", "must be an absolute path"},
		{"no policy", func(c *Config) { c.Policy.Name = "" }, "policy.name", "is required"},
		{"bad built-in name", func(c *Config) { c.Policy.Name = "Topology_Aware" }, "policy.name", "DNS label"},
		{"config and configFile", func(c *Config) { c.Policy.Config, c.Policy.ConfigFile = RawConfig("{}"), "/p.yaml" },
			"policy.configFile", "cannot be set together with policy.config"},
		{"memory too small", func(c *Config) { c.Policy.MemoryLimit = 0 }, "policy.memoryLimit", "between 64Ki and 4Gi"},
		{"memory too large", func(c *Config) { c.Policy.MemoryLimit = 8 << 30 }, "policy.memoryLimit", "8Gi must be a multiple of 64Ki between 64Ki and 4Gi"},
		{"memory not in pages", func(c *Config) { c.Policy.MemoryLimit = 100000 }, "policy.memoryLimit", "multiple of 64Ki"},
		{"timeout at NRI's", func(c *Config) { c.Policy.CallTimeout = Duration(2 * time.Second) }, "policy.callTimeout", "below 2s"},
		{"timeout zero", func(c *Config) { c.Policy.CallTimeout = 0 }, "policy.callTimeout", "at least 10ms"},
		{"timeout 1ns", func(c *Config) { c.Policy.CallTimeout = 1 }, "policy.callTimeout", "at least 10ms"},
		{"relative cacheDir", func(c *Config) { c.Policy.CacheDir = "cache" }, "policy.cacheDir", "absolute"},
		{"socket missing", func(c *Config) { c.NRI.SocketPath = "" }, "nri.socketPath", "is required"},
		{"socket too long", func(c *Config) { c.NRI.SocketPath = "/" + strings.Repeat("s", 107) }, "nri.socketPath", "108 bytes long, over the limit of 107"},
		{"plugin name", func(c *Config) { c.NRI.PluginName = "nri wasm" }, "nri.pluginName", "letters, digits"},
		{"plugin index", func(c *Config) { c.NRI.PluginIndex = "9" }, "nri.pluginIndex", `"9" must be two digits`},
		{"failure policy", func(c *Config) { c.NRI.OnPolicyFailure = "ignore" }, "nri.onPolicyFailure", `"fail-open" or "fail-closed"`},
		{"relative sysfs", func(c *Config) { c.Sysfs = "sys" }, "sysfs", "absolute"},
		{"no stateDir", func(c *Config) { c.StateDir = "" }, "stateDir", "is required"},
		{"metrics address", func(c *Config) { c.Metrics.Address = "9090" }, "metrics.address", "host:port"},
		{"metrics port", func(c *Config) { c.Metrics.Address = ":http" }, "metrics.address", "numeric port"},
		{"domain", func(c *Config) { c.DRA.Domain = "Example.com" }, "dra.domain", "DNS subdomain"},
		{"driver name too long", func(c *Config) { c.DRA.Domain = strings.Repeat("d", 50) + ".io" }, "dra.domain",
			"68 characters long, over the limit of 63"},
		{"plugin data dir", func(c *Config) { c.DRA.PluginDataDir = "plugins" }, "dra.pluginDataDir", "absolute"},
		{"registrar dir", func(c *Config) { c.DRA.RegistrarDir = "" }, "dra.registrarDir", "is required"},
		{"verbosity", func(c *Config) { c.Log.Verbosity = 11 }, "log.verbosity", "between 0 and 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.edit(c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %v, want a *FieldError", err)
			}
			testkit.Equal(t, fe.Field, tt.want)
			testkit.ErrorContains(t, err, tt.want+": ", tt.detail)
			t.Log(err)
		})
	}
}

func TestValidateReportsEveryField(t *testing.T) {
	c := valid()
	c.Policy.CallTimeout, c.NRI.PluginIndex, c.Log.Verbosity = 0, "x", -1
	testkit.ErrorContains(t, c.Validate(), "policy.callTimeout", "nri.pluginIndex", "log.verbosity")
	testkit.Equal(t, strings.Count(c.Validate().Error(), "\n"), 2)
}
