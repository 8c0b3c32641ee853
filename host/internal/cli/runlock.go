package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
)

// lockFile is the lock's name in the state directory.
const lockFile = "lock"

// lockStateDir takes the state directory's lock (flock on <dir>/lock), which
// one agent holds while it runs: in a surge upgrade the new agent starts next
// to the old one and must not touch the runtime, the checkpoint or kubelet
// until the old one has gone. While another agent holds the lock it sets
// standby, calls onStandby (which serves the probes), logs once, and waits,
// hands-off; it returns when it holds the lock (release gives it up) or when
// ctx ends (release is a no-op, held false).
func lockStateDir(ctx context.Context, dir string, log logr.Logger, standby *atomic.Bool, onStandby func()) (release func(), held bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("state directory lock: %w", err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("state directory lock: %w", err)
	}
	release = func() { f.Close() } // closing the file releases the lock
	fd := int(f.Fd())
	err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return release, true, nil
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, false, fmt.Errorf("state directory lock %s: %w", path, err)
	}
	standby.Store(true)
	defer standby.Store(false)
	onStandby()
	log.Info("STANDBY: another agent holds the state directory; ready but hands-off until it exits", "lock", path)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(fd, syscall.LOCK_EX) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, false, fmt.Errorf("state directory lock %s: %w", path, err)
		}
		log.Info("took over the state directory from the agent that held it", "lock", path, "waited", time.Since(start).Round(time.Millisecond))
		return release, true, nil
	case <-ctx.Done():
		return func() {}, false, nil // the process exits; the blocked flock with it
	}
}
