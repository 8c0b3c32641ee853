package config

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

// deadline is generous: the test waits for events, it does not time them.
const deadline = 30 * time.Second

type update struct {
	cfg *Config
	err error
}

// startWatch runs Watch on path until the test ends and returns its callbacks,
// after the first one (the file as it is now) has come.
func startWatch(t *testing.T, path string) <-chan update {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	updates := make(chan update, 100)
	done := make(chan error, 1)
	go func() { done <- Watch(ctx, path, func(c *Config, err error) { updates <- update{c, err} }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Watch: %v", err)
			}
		case <-time.After(deadline):
			t.Error("Watch did not return after its context was cancelled")
		}
	})
	waitFor(t, updates, "the initial configuration", func(u update) bool { return u.err == nil })
	return updates
}

// waitFor returns the first update that satisfies ok; editors and the steps
// below may produce intermediate states, which are skipped.
func waitFor(t *testing.T, updates <-chan update, what string, ok func(update) bool) update {
	t.Helper()
	timeout := time.After(deadline)
	for {
		select {
		case u := <-updates:
			if ok(u) {
				return u
			}
		case <-timeout:
			t.Fatalf("no callback with %s", what)
		}
	}
}

func withLog(v int) func(update) bool {
	return func(u update) bool { return u.err == nil && u.cfg.Log.Verbosity == v }
}

func configYAML(verbosity int) string {
	return "policy: {name: topology-aware}\nlog: {verbosity: " + string(rune('0'+verbosity)) + "}\n"
}

func TestWatchFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "config.yaml", configYAML(0))
	updates := startWatch(t, path)

	t.Run("rewritten in place", func(t *testing.T) {
		writeFile(t, dir, "config.yaml", configYAML(1))
		waitFor(t, updates, "verbosity 1", withLog(1))
	})
	t.Run("replaced by rename", func(t *testing.T) {
		tmp := writeFile(t, dir, ".config.yaml.swp", configYAML(2))
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		waitFor(t, updates, "verbosity 2", withLog(2))
	})
	t.Run("invalid edit", func(t *testing.T) {
		writeFile(t, dir, "config.yaml", "policy: {name: topology-aware, callTimeout: 5s}\n")
		u := waitFor(t, updates, "an error", func(u update) bool { return u.err != nil })
		testkit.Equal(t, u.cfg == nil, true)
		testkit.ErrorContains(t, u.err, "policy.callTimeout: 5s must be at least 10ms")
	})
	t.Run("fixed", func(t *testing.T) {
		writeFile(t, dir, "config.yaml", configYAML(3))
		waitFor(t, updates, "verbosity 3", withLog(3))
	})
	t.Run("unrelated file, then an atomic replace", func(t *testing.T) {
		writeFile(t, dir, "unrelated.txt", "x")
		tmp := writeFile(t, dir, ".config.yaml.new", configYAML(4))
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		// Nothing read changed until the rename: the next callback is the new file.
		u := waitFor(t, updates, "any callback", func(update) bool { return true })
		testkit.Equal(t, u.err == nil && u.cfg.Log.Verbosity == 4, true)
	})
	t.Run("policy config file", func(t *testing.T) {
		sub := filepath.Join(dir, "policy")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, sub, "p.yaml", "a: 1\n")
		writeFile(t, dir, "config.yaml", "policy: {name: topology-aware, configFile: policy/p.yaml}\n")
		waitFor(t, updates, "a: 1", func(u update) bool { return u.err == nil && string(u.cfg.Policy.Data) == "a: 1\n" })
		writeFile(t, sub, "p.yaml", "a: 2\n")
		waitFor(t, updates, "a: 2", func(u update) bool { return u.err == nil && string(u.cfg.Policy.Data) == "a: 2\n" })
	})
}

// TestWatchConfigMap follows a ConfigMap volume's update: a new timestamped
// directory, a "..data" symlink swapped to it by rename, the old one removed.
func TestWatchConfigMap(t *testing.T) {
	dir := t.TempDir()
	publish := func(version string, verbosity int) {
		t.Helper()
		ts := filepath.Join(dir, "..2025_01_01_00_00_0"+version)
		if err := os.Mkdir(ts, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, ts, "config.yaml", configYAML(verbosity))
		old, _ := os.Readlink(filepath.Join(dir, "..data"))
		if err := os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		if old != "" {
			if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish("1", 1)
	path := filepath.Join(dir, "config.yaml")
	if err := os.Symlink("..data/config.yaml", path); err != nil {
		t.Fatal(err)
	}
	updates := startWatch(t, path)
	for i, v := range []int{2, 3, 4} {
		publish(string(rune('2'+i)), v)
		waitFor(t, updates, "the swapped configuration", withLog(v))
	}
}

func TestWatchMissingDirectory(t *testing.T) {
	err := Watch(context.Background(), filepath.Join(t.TempDir(), "absent", "c.yaml"), func(*Config, error) {})
	testkit.ErrorContains(t, err, "watch config")
}
