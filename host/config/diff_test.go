package config

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(c *Config)
		wantLive    bool
		wantRestart []string
		wantSwap    []string
	}{
		{"nothing", func(c *Config) {}, false, nil, nil},
		{"policy config", func(c *Config) { c.Policy.Config, c.Policy.Data = RawConfig("{}"), []byte("{}") }, true, nil, nil},
		{"policy config from a file, same content", func(c *Config) { c.Policy.ConfigFile = "/etc/p.yaml" }, false, nil, nil},
		{"dra on", func(c *Config) { c.DRA.Enabled = ptr(true) }, false, []string{"dra.enabled"}, nil},
		{"dra explicitly off", func(c *Config) { c.DRA.Enabled = ptr(false) }, false, []string{"dra.enabled"}, nil},
		{"policy and socket", func(c *Config) { c.Policy.Name, c.NRI.SocketPath = "balloons", "/x.sock" }, false,
			[]string{"nri.socketPath"}, []string{"policy.name"}},
		{"live and restart", func(c *Config) { c.Policy.Data, c.Log.Verbosity = []byte("a: 1"), 3 }, true, []string{"log.verbosity"}, nil},
		{"policy name", func(c *Config) { c.Policy.Name = "balloons" }, false, nil, []string{"policy.name"}},
		{"module limits", func(c *Config) { c.Policy.MemoryLimit, c.Policy.CallTimeout = 512<<20, Duration(time.Second/2) }, false, nil,
			[]string{"policy.memoryLimit", "policy.callTimeout"}},
		{"swap check interval", func(c *Config) { c.Policy.Swap.CheckInterval = Duration(time.Hour) }, false, []string{"policy.swap.checkInterval"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, new := valid(), valid()
			tt.edit(new)
			c := Diff(old, new)
			testkit.Equal(t, c.PolicyConfig, tt.wantLive)
			testkit.Equal(t, slices.Equal(c.Restart, tt.wantRestart), true)
			testkit.Equal(t, slices.Equal(c.Swap, tt.wantSwap), true)
			testkit.Equal(t, c.IsZero(), !tt.wantLive && tt.wantRestart == nil && tt.wantSwap == nil)
			testkit.Equal(t, c.Err() != nil, tt.wantRestart != nil)
		})
	}
}

func TestDiffDRAMessage(t *testing.T) {
	old, new := valid(), valid()
	old.DRA.Enabled = ptr(false)
	new.DRA.Enabled = ptr(true)
	err := Diff(old, new).Err()
	testkit.Equal(t, err.Error(), "restart required to change dra.enabled")
	var re *RestartError
	testkit.Equal(t, errors.As(err, &re), true)
}

func TestDiffSeesEveryField(t *testing.T) {
	full, err := Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := Diff(Default(), full)
	var want, wantSwap, wantSettings []string
	for _, f := range allFields() {
		switch {
		case liveFields[f]:
		case swapFields[f]:
			wantSwap = append(wantSwap, f)
		case settingFields[f]:
			wantSettings = append(wantSettings, f)
		default:
			want = append(want, f)
		}
	}
	if !slices.Equal(c.Restart, want) || !slices.Equal(c.Swap, wantSwap) || !slices.Equal(c.Settings, wantSettings) {
		t.Fatalf("Diff saw restart %v, swap %v, settings %v; want %v, %v, %v", c.Restart, c.Swap, c.Settings, want, wantSwap, wantSettings)
	}
}

// TestDiffSwapBound: policy.swap.maxMoves alone is a setting, neither a swap
// nor a restart.
func TestDiffSwapBound(t *testing.T) {
	old, new := valid(), valid()
	new.Policy.Swap.MaxMoves = 3
	c := Diff(old, new)
	testkit.Equal(t, slices.Equal(c.Settings, []string{"policy.swap.maxMoves"}), true)
	testkit.Equal(t, c.IsZero(), false)
	testkit.Equal(t, c.Err(), error(nil))
}
