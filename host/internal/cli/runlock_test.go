package cli

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// TestLockStateDirStandsByUntilReleased: the first agent takes the state
// directory's lock at once; a second stands by (standby set, hands-off) until
// the first releases it, then holds it; a third, signalled while standing
// by, gives up without the lock.
func TestLockStateDirStandsByUntilReleased(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var s1, s2 atomic.Bool
	release1, held, err := lockStateDir(ctx, dir, logr.Discard(), &s1, func() {})
	if err != nil || !held || s1.Load() {
		t.Fatalf("first agent: held %v, standby %v, %v", held, s1.Load(), err)
	}
	type result struct {
		release func()
		held    bool
		err     error
	}
	second := make(chan result, 1)
	go func() {
		r, h, err := lockStateDir(ctx, dir, logr.Discard(), &s2, func() {})
		second <- result{r, h, err}
	}()
	for !s2.Load() {
		select {
		case r := <-second:
			t.Fatalf("the second agent returned while the first holds the lock: %+v", r)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	var s3 atomic.Bool
	third := make(chan bool, 1)
	go func() {
		_, h, _ := lockStateDir(cctx, dir, logr.Discard(), &s3, func() {})
		third <- h
	}()
	for !s3.Load() {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if <-third {
		t.Error("the third agent, signalled while standing by, holds the lock")
	}
	release1()
	r := <-second
	if r.err != nil || !r.held || s2.Load() {
		t.Fatalf("second agent after the first released: held %v, standby %v, %v", r.held, s2.Load(), r.err)
	}
	r.release()
}
