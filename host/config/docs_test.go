package config_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
)

var (
	// yamlBlock is a fenced YAML block in Markdown.
	yamlBlock = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```")
	// policySection starts a configuration file's policy mapping (a
	// simulation report's flow-style "policy: {…}" is not one).
	policySection = regexp.MustCompile(`(?m)^policy:[ \t]*(#.*)?$`)
)

// policyParsers check a built-in policy's configuration as the policy does
// at Init.
var policyParsers = map[string]func([]byte) error{
	"topology-aware": func(b []byte) error { _, err := topologyaware.ParseConfig(b); return err },
	"balloons":       func(b []byte) error { _, err := balloons.ParseConfig(b); return err },
}

// TestDocumentedConfigurationsLoad: every YAML example of the agent's
// configuration file in the repository's Markdown (a block with a top-level
// policy: mapping) loads with Load, and its policy configuration is accepted
// by the built-in policy it names — a documented example the agent would
// refuse at start fails here.
func TestDocumentedConfigurationsLoad(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "target" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		md, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for i, m := range yamlBlock.FindAllSubmatch(md, -1) {
			if !policySection.Match(m[1]) {
				continue
			}
			found++
			name := fmt.Sprintf("%s#%d", rel, i+1)
			t.Run(name, func(t *testing.T) {
				file := filepath.Join(t.TempDir(), "config.yaml")
				if err := os.WriteFile(file, m[1], 0o600); err != nil {
					t.Fatal(err)
				}
				cfg, err := config.Load(file)
				if err != nil {
					t.Fatalf("%s does not load: %v\n%s", rel, err, m[1])
				}
				if parse := policyParsers[cfg.Policy.Name]; parse != nil {
					if err := parse(cfg.Policy.Data); err != nil {
						t.Errorf("%s: policy %s refuses the configuration %s: %v", rel, cfg.Policy.Name, cfg.Policy.Data, err)
					}
				}
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 3 {
		t.Errorf("found %d configuration examples, want at least 3 (host/config/README.md, docs/agent.md, docs/oci.md)", found)
	}
}
