package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"golang.org/x/sys/cpu"

	"github.com/nriwasm/nriwasm/host/wasm/internal/interrupt"
)

// SeedManifestName is the manifest of a compiled-code seed directory
// (Precompile), which vouches for every file in it.
const SeedManifestName = "seed.json"

// seedFormat is the version of the seed manifest's layout.
const seedFormat = 1

// seedManifest describes a seed directory: what built it and, per module, the
// files of the compilation cache that module needs, with their sha256.
type seedManifest struct {
	Format int `json:"format"`
	// Wazero is the name of wazero's version-, OS- and architecture-specific
	// cache directory ("wazero-v1.12.0-amd64-linux"): compiled code is only
	// valid for that wazero build on that platform.
	Wazero string `json:"wazero"`
	// CPU lists the CPU features wazero's compiled code depends on (and keys
	// its cache entries on).
	CPU string `json:"cpu"`
	// Interrupt is the version of the deadline instrumentation the modules
	// were rewritten with.
	Interrupt string       `json:"interrupt"`
	Modules   []seedModule `json:"modules"`
}

// seedModule is one precompiled module.
type seedModule struct {
	Name string `json:"name"`
	// SHA256 is the digest of the module as Load receives it (before
	// instrumentation).
	SHA256 string     `json:"sha256"`
	Files  []seedFile `json:"files"`
}

type seedFile struct {
	// Path is relative to the seed directory and to the compilation cache.
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// wazeroCacheDir is the directory wazero keeps its compiled code in, inside a
// compilation cache: "wazero-" + its version (as the importing module's
// go.mod requires it, read from the build information as wazero reads it) +
// the architecture and OS.
func wazeroCacheDir() string {
	version := "dev"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/tetratelabs/wazero" && dep.Version != "" && dep.Version != "(devel)" {
				version = dep.Version
			}
		}
	}
	return "wazero-" + version + "-" + runtime.GOARCH + "-" + runtime.GOOS
}

// cpuFeatures names the CPU features wazero's compiler chooses instructions
// by, and keys its cache entries on (internal/platform in wazero v1.12).
func cpuFeatures() string {
	var fs []string
	switch runtime.GOARCH {
	case "amd64":
		if cpu.X86.HasSSE41 {
			fs = append(fs, "sse4.1")
		}
		if cpu.X86.HasBMI1 {
			fs = append(fs, "bmi1")
		}
		if cpu.X86.HasBMI1 && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT {
			fs = append(fs, "abm")
		}
	case "arm64":
		if cpu.ARM64.HasATOMICS {
			fs = append(fs, "atomics")
		}
	}
	return runtime.GOARCH + ":" + strings.Join(fs, ",")
}

// Precompile compiles each module (name → module bytes) as Load would, with
// the default options, and writes the compiled code into dir as a seed: the
// compilation cache's files and a manifest (SeedManifestName) naming, per
// module, its digest and each file's sha256, with the wazero build, CPU
// features and instrumentation version it was built for. An agent given the
// seed (WithSeedDir) copies a module's files into its own cache after checking
// all of this, and so skips compiling it. dir is created; files of an earlier
// seed in it are replaced.
func Precompile(ctx context.Context, dir string, modules map[string][]byte) error {
	work, err := os.MkdirTemp("", "nriwasm-precompile-")
	if err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	defer os.RemoveAll(work)
	m := seedManifest{Format: seedFormat, Wazero: wazeroCacheDir(), CPU: cpuFeatures(), Interrupt: interrupt.Version}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range modules {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		code := modules[name]
		cacheDir := filepath.Join(work, name)
		o := defaultOptions()
		o.cacheDir = cacheDir
		o.logger = logr.Discard()
		c, err := compile(ctx, name, code, &o, hostLog(o.logger, o.logs))
		if err != nil {
			return fmt.Errorf("precompile: %w", err)
		}
		if err := c.close(ctx); err != nil {
			return fmt.Errorf("precompile: policy %q: %w", name, err)
		}
		sm := seedModule{Name: name, SHA256: digest(code)}
		err = c.cache.walk(func(rel, path string) error {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			target := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := writeFileAtomic(target, data); err != nil {
				return err
			}
			if err := os.Chmod(target, 0o644); err != nil {
				return err
			}
			sm.Files = append(sm.Files, seedFile{Path: filepath.ToSlash(rel), Size: int64(len(data)), SHA256: digest(data)})
			return nil
		})
		if err != nil {
			return fmt.Errorf("precompile: policy %q: copy compiled code: %w", name, err)
		}
		m.Modules = append(m.Modules, sm)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, SeedManifestName), append(data, '\n')); err != nil {
		return fmt.Errorf("precompile: write manifest: %w", err)
	}
	return os.Chmod(filepath.Join(dir, SeedManifestName), 0o644)
}

func digest(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// errNoSeedEntry says the seed holds nothing for a module: not a fault.
var errNoSeedEntry = errors.New("the seed has no compiled code for this module")

// installSeed copies code's compiled files from the seed directory into the
// cache, after checking that the seed was built for this wazero build, CPU
// features and instrumentation, and that every file has the size and sha256
// the manifest gives. Nothing is installed unless all of it holds; the error
// says which check failed (errNoSeedEntry when the module is not in it).
func (c *cache) installSeed(seedDir string, code []byte) error {
	data, err := os.ReadFile(filepath.Join(seedDir, SeedManifestName))
	if err != nil {
		return fmt.Errorf("read seed manifest: %w", err)
	}
	var m seedManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("seed manifest %s: %w", filepath.Join(seedDir, SeedManifestName), err)
	}
	switch {
	case m.Format != seedFormat:
		return fmt.Errorf("seed manifest format %d, this agent reads %d", m.Format, seedFormat)
	case m.Wazero != wazeroCacheDir():
		return fmt.Errorf("seed built for %s, this agent runs %s", m.Wazero, wazeroCacheDir())
	case m.CPU != cpuFeatures():
		return fmt.Errorf("seed built for CPU features %q, this CPU has %q", m.CPU, cpuFeatures())
	case m.Interrupt != interrupt.Version:
		return fmt.Errorf("seed instrumented by deadline instrumentation %s, this agent uses %s", m.Interrupt, interrupt.Version)
	}
	want := digest(code)
	i := slices.IndexFunc(m.Modules, func(sm seedModule) bool { return sm.SHA256 == want })
	if i < 0 {
		return errNoSeedEntry
	}
	// Each file is streamed into a temporary file in the cache while it is
	// hashed (never held in memory whole: a seeded start's peak stays a warm
	// start's), and renamed into place only once every file checked out.
	type staged struct{ rel, tmp string }
	var files []staged
	defer func() {
		for _, f := range files {
			os.Remove(f.tmp)
		}
	}()
	for _, f := range m.Modules[i].Files {
		rel := filepath.FromSlash(f.Path)
		if !filepath.IsLocal(rel) || !(strings.HasPrefix(rel, "wazero"+string(filepath.Separator)) || strings.HasPrefix(rel, "instrumented"+string(filepath.Separator))) {
			return fmt.Errorf("seed file %q: outside the compilation cache's wazero/ and instrumented/", f.Path)
		}
		tmp, err := c.stage(filepath.Join(seedDir, rel), rel, f)
		if tmp != "" {
			files = append(files, staged{rel, tmp})
		}
		if err != nil {
			return fmt.Errorf("seed file %s: %w", f.Path, err)
		}
	}
	for _, f := range files {
		if err := os.Rename(f.tmp, filepath.Join(c.dir, f.rel)); err != nil {
			return fmt.Errorf("install seed file: %w", err)
		}
		s, err := sum(filepath.Join(c.dir, f.rel))
		if err != nil {
			return fmt.Errorf("install seed file: %w", err)
		}
		c.sums[f.rel] = s
		c.dirty = true
	}
	files = nil
	return nil
}

// stage copies the seed file at path into a temporary file beside its place
// rel in the cache, checking its size and sha256 against f on the way; it
// returns the temporary file's path (to remove on failure).
func (c *cache) stage(path, rel string, f seedFile) (string, error) {
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	target := filepath.Join(c.dir, rel)
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return "", err
	}
	out, err := os.CreateTemp(filepath.Dir(target), filepath.Base(target)+".tmp-*")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(in, f.Size+1))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return out.Name(), err
	case n != f.Size:
		return out.Name(), fmt.Errorf("size %d, the manifest says %d", n, f.Size)
	case hex.EncodeToString(h.Sum(nil)) != f.SHA256:
		return out.Name(), fmt.Errorf("sha256 %s, the manifest says %s", hex.EncodeToString(h.Sum(nil)), f.SHA256)
	}
	return out.Name(), nil
}

// NeedsCompile reports whether Load, given cacheDir (WithCacheDir) and
// seedDirs (WithSeedDir), would compile module: neither the cache's manifest
// nor a seed built for this agent lists it. It reads manifests only, no
// compiled code, so it is cheap enough to ask before every start; Load still
// makes every check.
func NeedsCompile(cacheDir string, module []byte, seedDirs ...string) bool {
	if data, err := os.ReadFile(filepath.Join(cacheDir, manifestName)); err == nil {
		var sums map[string]entrySum
		if json.Unmarshal(data, &sums) == nil {
			if _, ok := sums[instrumentedRel(module)]; ok {
				return false
			}
		}
	}
	want := digest(module)
	for _, dir := range seedDirs {
		data, err := os.ReadFile(filepath.Join(dir, SeedManifestName))
		if err != nil {
			continue
		}
		var m seedManifest
		if json.Unmarshal(data, &m) != nil || m.Format != seedFormat || m.Wazero != wazeroCacheDir() ||
			m.CPU != cpuFeatures() || m.Interrupt != interrupt.Version {
			continue
		}
		if slices.ContainsFunc(m.Modules, func(sm seedModule) bool { return sm.SHA256 == want }) {
			return false
		}
	}
	return true
}

// seedAvailable reports whether dir holds a seed manifest.
func seedAvailable(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, SeedManifestName))
	return !errors.Is(err, fs.ErrNotExist)
}
