package config

import (
	"errors"
	"slices"
	"testing"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(c *Config)
		wantLive    bool
		wantRestart []string
	}{
		{"nothing", func(c *Config) {}, false, nil},
		{"policy config", func(c *Config) { c.Policy.Config, c.Policy.Data = RawConfig("{}"), []byte("{}") }, true, nil},
		{"policy config from a file, same content", func(c *Config) { c.Policy.ConfigFile = "/etc/p.yaml" }, false, nil},
		{"dra on", func(c *Config) { c.DRA.Enabled = ptr(true) }, false, []string{"dra.enabled"}},
		{"dra explicitly off", func(c *Config) { c.DRA.Enabled = ptr(false) }, false, []string{"dra.enabled"}},
		{"policy and socket", func(c *Config) { c.Policy.Name, c.NRI.SocketPath = "balloons", "/x.sock" }, false,
			[]string{"policy.name", "nri.socketPath"}},
		{"live and restart", func(c *Config) { c.Policy.Data, c.Log.Verbosity = []byte("a: 1"), 3 }, true, []string{"log.verbosity"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, new := valid(), valid()
			tt.edit(new)
			c := Diff(old, new)
			require(t, c.PolicyConfig, tt.wantLive)
			require(t, slices.Equal(c.Restart, tt.wantRestart), true)
			require(t, c.IsZero(), !tt.wantLive && tt.wantRestart == nil)
			require(t, c.Err() != nil, tt.wantRestart != nil)
		})
	}
}

func TestDiffDRAMessage(t *testing.T) {
	old, new := valid(), valid()
	old.DRA.Enabled = ptr(false)
	new.DRA.Enabled = ptr(true)
	err := Diff(old, new).Err()
	require(t, err.Error(), "restart required to change dra.enabled")
	var re *RestartError
	require(t, errors.As(err, &re), true)
}

func TestDiffSeesEveryField(t *testing.T) {
	full, err := Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := Diff(Default(), full).Restart
	var want []string
	for _, f := range allFields() {
		if !liveFields[f] {
			want = append(want, f)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Diff saw %v, want %v", got, want)
	}
}
