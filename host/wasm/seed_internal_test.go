package wasm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

// seedModuleFixture is the Rust conformance policy: small, so compiling it
// (the fallback) is quick.
func seedModuleFixture(t *testing.T) []byte {
	t.Helper()
	code, err := os.ReadFile("testdata/conformance-rust.wasm")
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// logBuffer collects a logr.Logger's lines.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.lines = append(b.lines, args)
	}, funcr.Options{Verbosity: 1})
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// loadSource loads code with the cache in cacheDir and the seed in seedDir
// ("" for none) and says where its machine code came from.
func loadSource(t *testing.T, code []byte, cacheDir, seedDir string, log logr.Logger) codeSource {
	t.Helper()
	ctx := context.Background()
	opts := []Option{WithCacheDir(cacheDir), WithLogger(log)}
	if seedDir != "" {
		opts = append(opts, WithSeedDir(seedDir))
	}
	p, err := Load(ctx, "conformance", code, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	return p.compiled.source
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSeedSkipsCompile(t *testing.T) {
	code := seedModuleFixture(t)
	seed := t.TempDir()
	if err := Precompile(context.Background(), seed, map[string][]byte{"conformance": code}); err != nil {
		t.Fatal(err)
	}
	// Without the seed an empty cache compiles: the baseline that shows the
	// count below can tell.
	testkit.Equal(t, loadSource(t, code, t.TempDir(), "", logr.Discard()), codeCompiled)

	cache := t.TempDir()
	testkit.Equal(t, loadSource(t, code, cache, seed, logr.Discard()), codeSeed)
	// wazero wrote no compiled code of its own: the cache holds the seed's
	// files only.
	testkit.Equal(t, countFiles(t, filepath.Join(cache, "wazero")), countFiles(t, filepath.Join(seed, "wazero")))
	// The next start finds the code in its own cache.
	testkit.Equal(t, loadSource(t, code, cache, seed, logr.Discard()), codeCache)
}

func TestSeedMismatchFallsBack(t *testing.T) {
	code := seedModuleFixture(t)
	built := t.TempDir()
	if err := Precompile(context.Background(), built, map[string][]byte{"conformance": code}); err != nil {
		t.Fatal(err)
	}
	editManifest := func(edit func(m *seedManifest)) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			path := filepath.Join(dir, SeedManifestName)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var m seedManifest
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			edit(&m)
			if data, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	compiledFile := func(t *testing.T, dir string) string {
		var path string
		err := filepath.WalkDir(filepath.Join(dir, "wazero"), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				path = p
			}
			return err
		})
		if err != nil || path == "" {
			t.Fatalf("no compiled code in the seed (%v)", err)
		}
		return path
	}
	for _, tc := range []struct {
		name   string
		spoil  func(t *testing.T, dir string)
		reason string
	}{
		{"flipped byte in the compiled code", func(t *testing.T, dir string) {
			path := compiledFile(t, dir)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)/2] ^= 0xff
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "sha256"},
		{"truncated compiled code", func(t *testing.T, dir string) {
			if err := os.Truncate(compiledFile(t, dir), 100); err != nil {
				t.Fatal(err)
			}
		}, "size 100, the manifest says"},
		{"other wazero", editManifest(func(m *seedManifest) { m.Wazero = "wazero-v1.11.0-amd64-linux" }), "seed built for wazero-v1.11.0-amd64-linux"},
		{"other CPU", editManifest(func(m *seedManifest) { m.CPU = "riscv64:" }), "built for CPU features"},
		{"other instrumentation", editManifest(func(m *seedManifest) { m.Interrupt = "0" }), "deadline instrumentation 0"},
		{"file outside the cache", editManifest(func(m *seedManifest) { m.Modules[0].Files[0].Path = "../../etc/passwd" }), "outside the compilation cache"},
		{"unreadable manifest", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, SeedManifestName), []byte("{"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "seed manifest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seed := t.TempDir()
			if err := os.CopyFS(seed, os.DirFS(built)); err != nil {
				t.Fatal(err)
			}
			tc.spoil(t, seed)
			var logs logBuffer
			cache := t.TempDir()
			testkit.Equal(t, loadSource(t, code, cache, seed, logs.logger()), codeCompiled)
			if got := logs.String(); !strings.Contains(got, "not using the compiled-code seed") || !strings.Contains(got, tc.reason) {
				t.Fatalf("log does not say why the seed was not used (%q):\n%s", tc.reason, got)
			}
			// Nothing of the spoilt seed reached the cache: the next start reads
			// what this one compiled.
			testkit.Equal(t, loadSource(t, code, cache, seed, logr.Discard()), codeCache)
		})
	}
	t.Run("module not in the seed", func(t *testing.T) {
		var logs logBuffer
		other := append([]byte(nil), code...)
		other = append(other, 0, 6, 4, 'n', 'o', 'n', 'e', 0) // a custom section: another module
		testkit.Equal(t, loadSource(t, other, t.TempDir(), built, logs.logger()), codeCompiled)
		if got := logs.String(); !strings.Contains(got, "no compiled code in the seed") {
			t.Fatalf("log does not say the seed lacks the module:\n%s", got)
		}
	})
}

// TestWarmLoadLeavesTheCacheManifest: a start that finds everything in the
// cache does not rewrite (and fsync) the cache's checksum manifest.
func TestWarmLoadLeavesTheCacheManifest(t *testing.T) {
	code := seedModuleFixture(t)
	cache := t.TempDir()
	testkit.Equal(t, loadSource(t, code, cache, "", logr.Discard()), codeCompiled)
	before, err := os.Stat(filepath.Join(cache, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	testkit.Equal(t, loadSource(t, code, cache, "", logr.Discard()), codeCache)
	after, err := os.Stat(filepath.Join(cache, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	// writeFileAtomic renames a new file over the old: another inode.
	testkit.Equal(t, os.SameFile(before, after), true)
}

func TestNeedsCompile(t *testing.T) {
	code := seedModuleFixture(t)
	seed, other := t.TempDir(), t.TempDir()
	if err := Precompile(context.Background(), seed, map[string][]byte{"conformance": code}); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	testkit.Equal(t, NeedsCompile(cache, code), true)
	testkit.Equal(t, NeedsCompile(cache, code, other), true)
	testkit.Equal(t, NeedsCompile(cache, code, other, seed), false)
	// Two seeds: the first without the module, the second with it.
	testkit.Equal(t, loadSource(t, code, cache, other, logr.Discard()), codeCompiled)
	testkit.Equal(t, NeedsCompile(cache, code), false)
	fresh := t.TempDir()
	ctx := context.Background()
	p, err := Load(ctx, "conformance", code, WithCacheDir(fresh), WithSeedDir(other), WithSeedDir(seed), WithLogger(logr.Discard()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	testkit.Equal(t, p.compiled.source, codeSeed)
}

// TestCacheReadsACRC32CManifest: a cache whose manifest an earlier agent
// wrote with CRC-32C is still used, its manifest rewritten with CRC-32; an
// entry whose CRC-32C does not match is removed as before (its module is
// compiled again).
func TestCacheReadsACRC32CManifest(t *testing.T) {
	code := seedModuleFixture(t)
	for _, tc := range []struct {
		name  string
		wrong bool // the wazero entry's CRC-32C is off by one
		want  codeSource
	}{{"matching", false, codeCache}, {"wrong", true, codeCompiled}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			testkit.Equal(t, loadSource(t, code, dir, "", logr.Discard()), codeCompiled)
			c := &cache{dir: dir}
			legacy := map[string]map[string]any{}
			err := c.walk(func(rel, path string) error {
				s, err := sumTable(path, castagnoli)
				if tc.wrong && strings.HasPrefix(rel, "wazero") {
					s.CRC32++
				}
				legacy[rel] = map[string]any{"size": s.Size, "crc32c": s.CRC32}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(legacy)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, manifestName), data, 0o600); err != nil {
				t.Fatal(err)
			}
			testkit.Equal(t, loadSource(t, code, dir, "", logr.Discard()), tc.want)
			data, err = os.ReadFile(filepath.Join(dir, manifestName))
			if err != nil {
				t.Fatal(err)
			}
			var rewritten map[string]entrySum
			if err := json.Unmarshal(data, &rewritten); err != nil {
				t.Fatal(err)
			}
			testkit.Equal(t, len(rewritten), len(legacy))
			for rel, s := range rewritten {
				got, err := sum(filepath.Join(dir, rel))
				if err != nil {
					t.Fatal(err)
				}
				testkit.Equal(t, s, got)
			}
		})
	}
}
