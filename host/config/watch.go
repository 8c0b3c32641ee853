package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce is how long events must settle before the file is read again.
var debounce = 100 * time.Millisecond

// Watch loads the configuration at path whenever it or the policy's
// configuration file changes, and calls onChange with the result: the new
// configuration, or the error that keeps the running one in force. It blocks
// until ctx is done and returns nil then, or an error if the watch cannot start.
//
// onChange is first called once the watch is in place, with the file as it is
// then, so that no edit made between Load and Watch is lost; later calls come
// only when the bytes read differ from the previous call's. Compare with the
// running configuration using Diff.
//
// Watch observes the directories, not the files, so it follows editors that
// write a new file and rename it over the old one, and Kubernetes ConfigMap
// volumes, whose files are symbolic links through a "..data" link that is
// swapped on every update. Bursts of events are debounced.
func Watch(ctx context.Context, path string, onChange func(*Config, error)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch config: %w", err)
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(path)); err != nil {
		return fmt.Errorf("watch config: %w", err)
	}
	cw := &watcher{w: w, path: path, onChange: onChange}
	cw.reload()

	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil
		case _, ok := <-w.Events:
			if !ok {
				return nil
			}
			if timer == nil {
				timer = time.NewTimer(debounce)
			} else {
				timer.Reset(debounce)
			}
			fire = timer.C
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				onChange(nil, fmt.Errorf("watch config: %w", err))
			}
			cw.reload() // events may have been lost
		case <-fire:
			fire = nil
			if ctx.Err() == nil {
				cw.reload()
			}
		}
	}
}

type watcher struct {
	w        *fsnotify.Watcher
	path     string
	onChange func(*Config, error)
	dirs     []string // watched besides the file's own directory
	last     [][]byte // bytes read by the last reload
	lastErr  string
	called   bool
}

// reload loads the file, calls onChange if anything read differs from the last
// time, and adjusts the watched directories.
func (cw *watcher) reload() {
	cfg, read, err := load(cw.path)
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	same := cw.called && errText == cw.lastErr && slices.EqualFunc(read, cw.last, bytes.Equal)
	cw.called, cw.last, cw.lastErr = true, read, errText
	cw.watchDirs(cfg)
	if !same {
		cw.onChange(cfg, err)
	}
}

// watchDirs watches the directories of the file's symlink target and of the
// policy's configuration file (and its target), besides the file's directory.
func (cw *watcher) watchDirs(cfg *Config) {
	files := []string{cw.path}
	if cfg != nil && cfg.Policy.ConfigFile != "" {
		files = append(files, cfg.Policy.ConfigFile)
	}
	var dirs []string
	for _, f := range files {
		candidates := []string{filepath.Dir(f)}
		if target, err := filepath.EvalSymlinks(f); err == nil {
			candidates = append(candidates, filepath.Dir(target))
		}
		for _, d := range candidates {
			if d != filepath.Dir(cw.path) && !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	for _, d := range cw.dirs {
		if !slices.Contains(dirs, d) {
			_ = cw.w.Remove(d) // fails if the directory is gone: nothing to do
		}
	}
	cw.dirs = cw.dirs[:0]
	for _, d := range dirs {
		if cw.w.Add(d) == nil {
			cw.dirs = append(cw.dirs, d)
		}
	}
}
