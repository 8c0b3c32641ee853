package wasm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/wasm/internal/interrupt"
)

// cache is the on-disk cache of compiled policies: wazero's compilation cache
// (wazero/) and the instrumented modules it compiles (instrumented/), guarded by
// checksums. wazero checks only part of its entries, and a flipped byte elsewhere
// (a function offset) would make it run garbage. Files that do not match the
// manifest are removed before anyone reads them; wazero then compiles afresh and
// the new files are recorded.
type cache struct {
	dir    string
	logger logr.Logger
	// sums are the verified entries, by path relative to dir.
	sums map[string]entrySum
	// dirty says sums differ from the manifest on disk.
	dirty bool
}

// entrySum is a cache file's size and CRC-32 (IEEE: with the CPU's
// carry-less multiply it checks ~2x faster than CRC-32C, RATIONALE.md).
type entrySum struct {
	Size  int64  `json:"size"`
	CRC32 uint32 `json:"crc32"`
}

// manifestEntry is an entry of the manifest as read: an agent before the
// CRC-32 manifest wrote CRC-32C, which verify still checks (and then
// records the file's CRC-32), so an upgrade keeps the cache.
type manifestEntry struct {
	Size   int64   `json:"size"`
	CRC32  *uint32 `json:"crc32"`
	CRC32C *uint32 `json:"crc32c"`
}

const manifestName = "checksums.json"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func openCache(dir string, logger logr.Logger) (*cache, error) {
	c := &cache{dir: dir, logger: logger, sums: map[string]entrySum{}}
	if err := os.MkdirAll(c.wazeroDir(), 0o700); err != nil {
		return nil, fmt.Errorf("create compilation cache %s: %w", dir, err)
	}
	if err := c.verify(); err != nil {
		return nil, fmt.Errorf("verify compilation cache %s: %w", dir, err)
	}
	return c, nil
}

func (c *cache) wazeroDir() string { return filepath.Join(c.dir, "wazero") }

func (c *cache) instrumentedDir() string { return filepath.Join(c.dir, "instrumented") }

// instrumented returns the instrumented form of code, whose entry is rel
// (instrumentedRel), from the cache, or makes it with instrument and stores
// it. Entries are keyed by the rewriter's version and the module's digest, so
// a host with a changed check never reuses the output of an older one.
func (c *cache) instrumented(rel string, code []byte, instrument func([]byte) ([]byte, error)) ([]byte, error) {
	path := filepath.Join(c.dir, rel)
	if _, ok := c.sums[rel]; ok {
		if data, err := os.ReadFile(path); err == nil {
			return data, nil
		}
	}
	data, err := instrument(code)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.instrumentedDir(), 0o700); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(path, data); err != nil {
		return nil, err
	}
	c.sums[rel] = entrySum{Size: int64(len(data)), CRC32: crc32.ChecksumIEEE(data)}
	c.dirty = true
	return data, nil
}

// instrumentedRel is the cache path of code's instrumented form. It hashes
// the whole module: a Load computes it once.
func instrumentedRel(code []byte) string {
	h := sha256.New()
	h.Write([]byte(interrupt.Version))
	h.Write(code)
	return filepath.Join("instrumented", hex.EncodeToString(h.Sum(nil))+".wasm")
}

// has reports whether the cache holds the instrumented module at rel
// (instrumentedRel), which it gets with its compiled code.
func (c *cache) has(rel string) bool {
	_, ok := c.sums[rel]
	return ok
}

// verify removes every entry the manifest does not vouch for.
func (c *cache) verify() error {
	manifest := map[string]manifestEntry{}
	data, err := os.ReadFile(filepath.Join(c.dir, manifestName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(data, &manifest); err != nil {
			c.logger.Info("compilation cache manifest unreadable, discarding the cache", "dir", c.dir, "err", err.Error())
			manifest = map[string]manifestEntry{}
		}
	}
	legacy := false
	err = c.walk(func(rel, path string) error {
		want, known := manifest[rel]
		ok := false
		var got entrySum
		var err error
		switch {
		case !known:
		case want.CRC32 != nil:
			got, err = sum(path)
			ok = err == nil && got == entrySum{Size: want.Size, CRC32: *want.CRC32}
		case want.CRC32C != nil:
			var c32c entrySum
			if c32c, err = sumTable(path, castagnoli); err == nil && c32c == (entrySum{Size: want.Size, CRC32: *want.CRC32C}) {
				got, err = sum(path)
				ok, legacy = err == nil, true
			}
		}
		if err != nil {
			return err
		}
		if ok {
			c.sums[rel] = got
			return nil
		}
		c.logger.Info("removing unverified compilation cache entry", "path", path, "known", known)
		return os.Remove(path)
	})
	// The manifest is rewritten (record) only when it no longer lists exactly
	// the verified entries, or lists them with CRC-32C.
	c.dirty = legacy || len(c.sums) != len(manifest)
	return err
}

// record adds the entries wazero wrote since verify to the manifest, and
// says how many of them are compiled code (wazero compiled a module).
func (c *cache) record() (compiled int, err error) {
	err = c.walk(func(rel, path string) error {
		if _, ok := c.sums[rel]; ok {
			return nil
		}
		s, err := sum(path)
		if err != nil {
			return err
		}
		c.sums[rel] = s
		c.dirty = true
		if strings.HasPrefix(rel, "wazero"+string(filepath.Separator)) {
			compiled++
		}
		return nil
	})
	if err != nil || !c.dirty {
		return compiled, err
	}
	data, err := json.Marshal(c.sums)
	if err != nil {
		return compiled, err
	}
	if err := writeFileAtomic(filepath.Join(c.dir, manifestName), data); err != nil {
		return compiled, err
	}
	c.dirty = false
	return compiled, nil
}

// reset empties the cache.
func (c *cache) reset() error {
	c.sums = map[string]entrySum{}
	c.dirty = true
	if err := os.RemoveAll(c.wazeroDir()); err != nil {
		return err
	}
	if err := os.RemoveAll(c.instrumentedDir()); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(c.dir, manifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.MkdirAll(c.wazeroDir(), 0o700)
}

// walk visits every cached file: the regular files under wazeroDir and
// instrumentedDir, but not temporary files. Nothing else in dir is touched: the
// directory may be shared.
func (c *cache) walk(fn func(rel, path string) error) error {
	for _, root := range []string{c.wazeroDir(), c.instrumentedDir()} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return fs.SkipDir
			}
			if err != nil || !d.Type().IsRegular() || strings.Contains(d.Name(), ".tmp-") {
				return err
			}
			rel, err := filepath.Rel(c.dir, path)
			if err != nil {
				return err
			}
			return fn(rel, path)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// sum is the file's size and CRC-32 (IEEE).
func sum(path string) (entrySum, error) {
	return sumTable(path, crc32.IEEETable)
}

// sumTable is the file's size and CRC-32 with table's polynomial.
func sumTable(path string, table *crc32.Table) (entrySum, error) {
	f, err := os.Open(path)
	if err != nil {
		return entrySum{}, err
	}
	defer f.Close()
	h := crc32.New(table)
	n, err := io.Copy(h, f)
	if err != nil {
		return entrySum{}, fmt.Errorf("read %s: %w", path, err)
	}
	return entrySum{Size: n, CRC32: h.Sum32()}, nil
}

// writeFileAtomic writes data to path through a synced temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
