package config

import (
	"cmp"
	"github.com/nriwasm/nriwasm/host/internal/strictjson"

	"fmt"
	"io"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/nriwasm/nriwasm/host/oci/ref"
)

// MaxFileBytes caps the configuration file: a full configuration is a few
// KiB, and decoding takes some 25 times the file's size in memory.
const MaxFileBytes = 1 << 20

// readLimited reads the file at path, refusing one over limit bytes before
// reading it all.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: over the limit of %d bytes", path, limit)
	}
	return data, nil
}

// Load reads the configuration file at path: Parse, then Complete with the
// file's directory, then Validate. Errors name the file and the field.
func Load(path string) (*Config, error) {
	cfg, _, err := load(path)
	return cfg, err
}

// load is Load that also returns the bytes read (the file, then the policy's
// configuration file), so Watch can tell whether anything changed.
func load(path string) (*Config, [][]byte, error) {
	data, err := readLimited(path, MaxFileBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	read := [][]byte{data}
	cfg, err := Parse(data)
	if err != nil {
		return nil, read, fmt.Errorf("config %s: %w", path, err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err == nil {
		err = cfg.Complete(dir)
	}
	if err != nil {
		return nil, read, fmt.Errorf("config %s: %w", path, err)
	}
	read = append(read, cfg.Policy.Data)
	if err := cfg.Validate(); err != nil {
		return nil, read, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, read, nil
}

// Parse decodes a YAML (or JSON) configuration over the defaults, strictly: an
// unknown field, a duplicate key or a value of the wrong type is an error naming
// the field. It reads no file and does not validate; see Complete and Validate.
func Parse(data []byte) (*Config, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, err
	}
	cfg := Default()
	if err := strictjson.Decode(js, cfg, ""); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Complete prepares a parsed configuration for use: relative paths become
// relative to dir, policy.cacheDir gets its default, and Policy.Data is filled
// from policy.config or by reading policy.configFile.
func (c *Config) Complete(dir string) error {
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	if c.Policy.IsPath() {
		abs(&c.Policy.Name)
	}
	if r, err := ref.Parse(c.Policy.Name); err == nil && r.IsLayout() {
		c.Policy.Name = r.Abs(dir).String()
	}
	for _, p := range []*string{&c.Policy.ConfigFile, &c.Policy.CacheDir, &c.Policy.SeedDir, &c.NRI.SocketPath,
		&c.Sysfs, &c.StateDir, &c.DRA.PluginDataDir, &c.DRA.RegistrarDir, &c.DRA.CDIDir, &c.DRA.Kubeconfig, &c.Registry.CacheDir} {
		abs(p)
	}
	for i := range c.Registry.PublicKeys {
		abs(&c.Registry.PublicKeys[i])
	}
	if c.Registry.CacheDir == "" && c.StateDir != "" {
		c.Registry.CacheDir = filepath.Join(c.StateDir, "oci")
	}
	if c.Policy.CacheDir == "" && c.StateDir != "" {
		c.Policy.CacheDir = filepath.Join(c.StateDir, "cache")
	}
	if c.Record.Dir == "" && c.StateDir != "" {
		c.Record.Dir = filepath.Join(c.StateDir, "record")
	}
	abs(&c.Record.Dir)
	if sh := c.Policy.Shadow; sh != nil {
		if (&Policy{Name: sh.Name}).IsPath() {
			abs(&sh.Name)
		}
		abs(&sh.ConfigFile)
		if sh.MemoryLimit == 0 {
			sh.MemoryLimit = c.Policy.MemoryLimit
		}
		if sh.CallTimeout == 0 {
			sh.CallTimeout = c.Policy.CallTimeout
		}
		sh.QueueLength = cmp.Or(sh.QueueLength, DefaultShadowQueueLength)
		sh.Keep = cmp.Or(sh.Keep, DefaultShadowKeep)
		sh.MaxFailures = cmp.Or(sh.MaxFailures, DefaultShadowMaxFailures)
		sh.Data = sh.Config
		if sh.ConfigFile != "" {
			data, err := os.ReadFile(sh.ConfigFile)
			if err != nil {
				return fmt.Errorf("policy.shadow.configFile: %w", err)
			}
			sh.Data = data
		}
	}
	c.Policy.Data = c.Policy.Config
	if c.Policy.ConfigFile != "" {
		data, err := os.ReadFile(c.Policy.ConfigFile)
		if err != nil {
			return fmt.Errorf("policy.configFile: %w", err)
		}
		c.Policy.Data = data
	}
	return nil
}
