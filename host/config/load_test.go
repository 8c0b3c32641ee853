package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

func TestLoadFull(t *testing.T) {
	cfg, err := Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata/policies/custom.wasm")
	key, _ := filepath.Abs("testdata/keys/cosign.pub")
	want := &Config{
		Policy: Policy{
			Name:        abs,
			Config:      RawConfig(`{"pools":[{"cpus":4,"name":"shared"}],"reservedCPUs":"0-1"}`),
			MemoryLimit: 512 << 20, CallTimeout: Duration(750 * time.Millisecond),
			CacheDir: "/var/cache/nriwasm", SeedDir: "/opt/nriwasm/seed",
			Swap: Swap{MaxMoves: 2, CheckInterval: Duration(time.Hour)},
			Data: []byte(`{"pools":[{"cpus":4,"name":"shared"}],"reservedCPUs":"0-1"}`),
			Shadow: &Shadow{Name: "balloons", Config: RawConfig(`{"reservedCPUs":"0"}`), MemoryLimit: 128 << 20,
				CallTimeout: Duration(500 * time.Millisecond), QueueLength: 64, Keep: 10, MaxFailures: 5,
				Data: []byte(`{"reservedCPUs":"0"}`)},
		},
		NRI:           NRI{SocketPath: "/run/containerd/nri.sock", PluginName: "resource-policy", PluginIndex: "10", OnPolicyFailure: FailClosed},
		Sysfs:         "/host/sys",
		AvailableCPUs: "1-3",
		StateDir:      "/var/lib/nriwasm-test",
		Metrics:       Metrics{Address: "127.0.0.1:9191"},
		DRA: DRA{Enabled: ptr(false), Domain: "example.com",
			PluginDataDir: "/var/lib/kubelet/plugins/custom", RegistrarDir: "/var/lib/kubelet/plugins_registry2",
			CDIDir: "/etc/cdi", Kubeconfig: "/etc/nriwasm/kubeconfig"},
		Log: Log{Verbosity: 4},
		Registry: Registry{PlainHTTP: []string{"localhost:5000"}, CacheDir: "/var/cache/nriwasm-oci",
			Timeout: Duration(30 * time.Second), Verification: VerifyEnforce, PublicKeys: []string{key}},
		Record: Record{MaxSize: 8 << 20, Dir: "/var/lib/nriwasm-test/history"},
		Fleet:  Fleet{Enabled: true},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got  %+v\nwant %+v", cfg, want)
	}
	// Every field differs from its default, so the test covers every field.
	change := Diff(Default(), cfg)
	testkit.Equal(t, change.PolicyConfig, true)
	for _, f := range allFields() {
		if !liveFields[f] && !slices.Contains(change.Restart, f) && !slices.Contains(change.Swap, f) && !slices.Contains(change.Settings, f) {
			t.Errorf("testdata/full.yaml leaves %s at its default", f)
		}
	}
}

func TestLoadDefaults(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Load(writeFile(t, dir, "c.yaml", "policy: {name: topology-aware}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Policy.Name = "topology-aware"
	want.Policy.CacheDir = DefaultStateDir + "/cache"
	want.Registry.CacheDir = DefaultStateDir + "/oci"
	want.Record.Dir = DefaultStateDir + "/record"
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got  %+v\nwant %+v", cfg, want)
	}
	testkit.Equal(t, cfg.DRA.Enabled == nil, true)
	testkit.Equal(t, cfg.DRA.DriverName(cfg.Policy.Name), "topology-aware.nri.io")
	testkit.Equal(t, cfg.DRA.DataDir("topology-aware.nri.io"), "/var/lib/kubelet/plugins/topology-aware.nri.io")
}

func TestPolicyConfigForms(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "policy.yaml", "reservedCPUs: 0-1 # comment kept\n")
	tests := []struct {
		name, yaml, want string
	}{
		{"object", "config: {b: 1, a: [x]}", `{"a":["x"],"b":1}`},
		{"string kept verbatim", "config: |\n    a: 1 # comment\n    b: two\n", "a: 1 # comment\nb: two\n"},
		{"JSON string", `config: '{"a": 1}'`, `{"a": 1}`},
		{"file", "configFile: policy.yaml", "reservedCPUs: 0-1 # comment kept\n"},
		{"none", "callTimeout: 1s", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeFile(t, dir, "c.yaml", "policy:\n  name: balloons\n  "+tt.yaml+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			testkit.Equal(t, string(cfg.Policy.Data), tt.want)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown top-level field", "policy: {name: p}\nstatedir: /x", []string{"statedir: unknown field", "the top level has", "stateDir"}},
		{"unknown nested field", "policy: {name: p, memoryLimt: 1Gi}", []string{"policy.memoryLimt: unknown field", "memoryLimit"}},
		{"unknown deeper field", "dra: {enabled: true, extra: {a: 1}}", []string{"dra.extra: unknown field"}},
		{"duplicate key", "policy: {name: p}\npolicy: {name: q}", []string{`key "policy" already set`}},
		{"string expected", "policy: {name: p}\nnri: {pluginName: 5}", []string{"nri.pluginName: got the number 5, want a string"}},
		{"object expected", "policy: p", []string{`policy: got the string "p", want an object`}},
		{"bool expected", "dra: {enabled: maybe}", []string{`dra.enabled: got the string "maybe", want true or false`}},
		{"integer expected", "log: {verbosity: 1.5}", []string{"log.verbosity: got the number 1.5, want an integer"}},
		{"bad quantity", "policy: {name: p, memoryLimit: 1GB}", []string{"policy.memoryLimit:", `"1GB" is not a quantity`}},
		{"duration as number", "policy: {name: p, callTimeout: 1}", []string{"policy.callTimeout: 1 is not a duration"}},
		{"bad duration", "policy: {name: p, callTimeout: 1 sec}", []string{`policy.callTimeout: "1 sec" is not a duration`}},
		{"plugin index out of range", "nri: {pluginIndex: 100}", []string{"nri.pluginIndex: 100 is out of range"}},
		{"not YAML", "policy: [", []string{"yaml"}},
		{"invalid after parsing", "policy: {name: p, callTimeout: 2s}", []string{"policy.callTimeout: 2s must be at least 10ms (a policy's Init and a garbage collection take milliseconds) and below 2s"}},
		{"missing configFile", "policy: {name: p, configFile: nope.yaml}", []string{"policy.configFile:", "nope.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, "c.yaml", tt.yaml)
			cfg, err := Load(path)
			testkit.ErrorContains(t, err, append(tt.want, path)...)
			testkit.Equal(t, cfg == nil, true)
			t.Log(err)
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := Load(dir + "/absent.yaml")
		testkit.ErrorContains(t, err, "read config", "absent.yaml")
	})
}

func TestPluginIndexNumber(t *testing.T) {
	cfg, err := Parse([]byte("nri: {pluginIndex: 5}"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.Equal(t, cfg.NRI.PluginIndex, PluginIndex("05"))
}

func TestQuantity(t *testing.T) {
	tests := []struct {
		in   string
		want Quantity
		out  string
	}{
		{"256Mi", 256 << 20, "256Mi"}, {"1Gi", 1 << 30, "1Gi"}, {"65536", 64 << 10, "64Ki"},
		{"1G", 1e9, "1000000000"}, {"3k", 3000, "3000"}, {"0", 0, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			q, err := ParseQuantity(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Equal(t, q, tt.want)
			testkit.Equal(t, q.String(), tt.out)
		})
	}
	for _, bad := range []string{"", "-1Mi", "1.5Gi", "1 Gi", "1GB", "99999999999Ti"} {
		t.Run("bad "+bad, func(t *testing.T) {
			if _, err := ParseQuantity(bad); err == nil {
				t.Fatalf("ParseQuantity(%q) succeeded", bad)
			}
		})
	}
}

// TestLoadTooLarge: a configuration file over MaxFileBytes is refused before
// it is read whole, and the error says the limit.
func TestLoadTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	data := []byte("policy: {name: balloons}\n" + strings.Repeat("# padding\n", MaxFileBytes/10+1))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "over the limit of 1048576 bytes") {
		t.Fatalf("Load error = %v, want the size limit", err)
	}
}
