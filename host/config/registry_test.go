package config

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

func TestValidateRegistry(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(c *Config)
		want   string // "" for valid
		detail string
	}{
		{"registry reference", func(c *Config) { c.Policy.Name = "oci://registry.example.com/policies/balloons:1.2" }, "", ""},
		{"pinned reference", func(c *Config) {
			c.Policy.Name = "oci://localhost:5000/p@sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
		}, "", ""},
		{"layout reference", func(c *Config) { c.Policy.Name = "oci-layout:///var/lib/policies:v1" }, "", ""},
		{"reference without tag", func(c *Config) { c.Policy.Name = "oci://registry.example.com/p" }, "policy.name", "no tag or digest"},
		{"relative layout", func(c *Config) { c.Policy.Name = "oci-layout://policies:v1" }, "policy.name", "absolute layout path"},
		{"plain HTTP host", func(c *Config) { c.Registry.PlainHTTP = []string{"localhost:5000", "a b"} }, "registry.plainHTTP[1]", `"a b" must be a registry's host`},
		{"relative cache", func(c *Config) { c.Registry.CacheDir = "oci" }, "registry.cacheDir", "absolute"},
		{"timeout", func(c *Config) { c.Registry.Timeout = 0 }, "registry.timeout", "positive and at most 10m0s"},
		{"mode", func(c *Config) { c.Registry.Verification = "strict" }, "registry.verification", `"strict" must be "off", "warn" or "enforce"`},
		{"enforce without keys", func(c *Config) { c.Registry.Verification = VerifyEnforce }, "registry.publicKeys", `needs at least one key when registry.verification is "enforce"`},
		{"relative key", func(c *Config) {
			c.Registry.Verification, c.Registry.PublicKeys = VerifyWarn, []string{"cosign.pub"}
		}, "registry.publicKeys[0]", "absolute"},
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
		})
	}
}

func TestCompleteOCIReferences(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Load(writeFile(t, dir, "c.yaml", "policy: {name: \"oci-layout://layout:v1\"}\nregistry: {verification: warn, publicKeys: [k.pub]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.Equal(t, cfg.Policy.Name, "oci-layout://"+filepath.Join(dir, "layout")+":v1")
	testkit.Equal(t, cfg.Registry.PublicKeys[0], filepath.Join(dir, "k.pub"))
	testkit.Equal(t, cfg.Policy.IsOCI() && !cfg.Policy.IsPath(), true)
	// A registry reference is neither made absolute nor taken for a path.
	cfg, err = Load(writeFile(t, dir, "d.yaml", "policy: {name: \"oci://registry.example.com/policies/p:1\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.Equal(t, cfg.Policy.Name, "oci://registry.example.com/policies/p:1")
}
