package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// sysfs reads files under one root. Paths handed to its methods are
// slash-separated and relative to the root.
type sysfs struct {
	root     string // as given, cleaned
	realRoot string // root with symlinks resolved, for making link targets relative
}

func (s *sysfs) path(rel string) string { return filepath.Join(s.root, rel) }

// read returns the file's content without surrounding white space; ok is
// false when the file does not exist.
func (s *sysfs) read(rel string) (content string, ok bool, err error) {
	p := s.path(rel)
	b, err := readFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("topology: read %s: %w", p, err)
	}
	return strings.TrimSpace(b), true, nil
}

// badContent is the error for a file that exists but does not parse.
func (s *sysfs) badContent(rel, content string, err error) error {
	return fmt.Errorf("topology: %s: bad content %q: %w", s.path(rel), content, err)
}

// readList reads a file in list format; a missing file is an empty list.
func (s *sysfs) readList(rel string) (ids []uint32, ok bool, err error) {
	c, ok, err := s.read(rel)
	if !ok || err != nil {
		return nil, ok, err
	}
	ids, err = ParseList(c)
	if err != nil {
		return nil, false, s.badContent(rel, c, err)
	}
	return ids, true, nil
}

// readUint reads a decimal unsigned number; a missing file reads as 0.
func (s *sysfs) readUint(rel string, bits int) (v uint64, ok bool, err error) {
	c, ok, err := s.read(rel)
	if !ok || err != nil {
		return 0, ok, err
	}
	v, err = strconv.ParseUint(c, 10, bits)
	if err != nil {
		return 0, false, s.badContent(rel, c, err)
	}
	return v, true, nil
}

// readID reads a topology id. The kernel prints -1 for "none" (die_id and
// cluster_id on some architectures, numa_node of a device without
// affinity); that, like a missing file, gives ok == false.
func (s *sysfs) readID(rel string) (id uint32, ok bool, err error) {
	c, ok, err := s.read(rel)
	if !ok || err != nil || c == "-1" {
		return 0, false, err
	}
	v, err := strconv.ParseUint(c, 10, 32)
	if err != nil {
		return 0, false, s.badContent(rel, c, err)
	}
	return uint32(v), true, nil
}

// resolve returns where a link under the root points, relative to the root
// and slash-separated ("devices/pci0000:00/0000:00:03.0"); ok is false when
// the path does not exist or leads outside the root.
func (s *sysfs) resolve(rel string) (string, bool, error) {
	p, err := filepath.EvalSymlinks(s.path(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("topology: resolve %s: %w", s.path(rel), err)
	}
	r, err := filepath.Rel(s.realRoot, p)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", false, nil
	}
	return filepath.ToSlash(r), true, nil
}

// dirNames lists a directory's entries with the given prefix, sorted; a
// missing directory has none.
func (s *sysfs) dirNames(rel, prefix string) ([]string, error) {
	p := s.path(rel)
	entries, err := os.ReadDir(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("topology: list %s: %w", p, err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// subdirs lists a directory's subdirectories and symlinks (sysfs device
// lists hold links; class/net may also hold a bonding_masters file), sorted;
// a missing directory has none.
func (s *sysfs) subdirs(rel string) ([]string, error) {
	p := s.path(rel)
	entries, err := os.ReadDir(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("topology: list %s: %w", p, err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// exists reports whether a path exists under the root.
func (s *sysfs) exists(rel string) bool {
	_, err := os.Stat(s.path(rel))
	return err == nil
}

// numberedNames returns the numbers N of the entries named prefix+N in a
// directory ("node0", "node1" → 0, 1), sorted.
func (s *sysfs) numberedNames(rel, prefix string) ([]uint32, error) {
	names, err := s.dirNames(rel, prefix)
	if err != nil {
		return nil, err
	}
	var ids []uint32
	for _, n := range names {
		if v, err := parseID(n[len(prefix):]); err == nil {
			ids = append(ids, v)
		}
	}
	return sortedUnique(ids), nil
}

// parallel calls f(0) ... f(n-1) on up to GOMAXPROCS goroutines and returns
// the error of the lowest i that failed, so that errors do not depend on
// scheduling.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				errs[i] = f(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
