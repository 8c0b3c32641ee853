package resmgr

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nriwasm/nriwasm/host/state"
)

// saveDelay is how long the saver lets a burst of changes gather before it
// copies the journal: one save then covers the whole burst. It bounds what a
// crash can lose of changes that need no save before their answer (removals,
// pod events); CreateContainer saves before it answers (saveNow), and Stop
// always saves.
const saveDelay = 50 * time.Millisecond

// saver writes the journal to its checkpoint in the background: a change only
// kicks it, and one save covers every change made before it took its copy, so
// a burst of requests costs one write (an fsync takes milliseconds; a request
// must answer in microseconds). The copy is taken under the manager's lock,
// saveDelay after the first change of a burst; the encoding and the write
// happen outside the lock.
type saver struct {
	ck      *state.Checkpoint
	kickC   chan struct{}
	mu      sync.Mutex // serializes saves (Checkpoint is not concurrent-safe)
	savedAt uint64     // journal generation of the last successful (durable) save
	saved   bool
	// writtenAt is the generation saveNow last wrote, without fsync.
	writtenAt uint64
	written   bool
	buf       []byte // the encoded journal, reused
	// failing holds the last save's error while saves fail (a read-only
	// state directory); Ready reports it.
	failing atomic.Pointer[error]
}

func newSaver(ck *state.Checkpoint) *saver {
	return &saver{ck: ck, kickC: make(chan struct{}, 1)}
}

// kick asks for a save; it never blocks.
func (s *saver) kick() {
	select {
	case s.kickC <- struct{}{}:
	default:
	}
}

// run saves on every kick until ctx ends.
func (m *Manager) runSaver(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.saver.kickC:
		}
		select {
		case <-ctx.Done():
			return // Stop saves
		case <-time.After(saveDelay):
		}
		m.save()
	}
}

// save writes the journal if it changed since the last save. Under the
// manager's lock it only encodes the journal (into a reused buffer); the write
// happens outside it. Lock order: the manager's, then the saver's.
func (m *Manager) save() {
	s := m.saver
	m.mu.Lock()
	s.mu.Lock()
	defer s.mu.Unlock()
	buf, gen, ok := m.encodeLocked()
	m.mu.Unlock()
	if !ok {
		return
	}
	if err := m.writeLocked(buf, gen); err != nil {
		m.log.Error(err, "checkpoint not saved; will retry on the next change")
	}
}

// saveNow writes the journal before the caller answers, with the manager's
// lock held (the caller's): a decision the runtime acts on is in the
// checkpoint first, so a kill -9 right after the answer does not lose it.
//
// It writes without fsync (the rename is atomic; the page cache outlives the
// process), which is what a crash of the agent needs: an fsync per answer
// made CreateContainer 17× slower at the median (docs/agent.md). Only a crash
// of the node loses it, and with it every container. The background saver
// writes the same journal durably saveDelay later.
func (m *Manager) saveNow() error {
	s := m.saver
	s.mu.Lock()
	defer s.mu.Unlock()
	gen := m.journal.Generation()
	if (s.saved && gen == s.savedAt) || (s.written && gen == s.writtenAt) {
		return nil
	}
	buf, err := state.Marshal(s.buf[:0], m.journal)
	if err != nil {
		return fmt.Errorf("encode journal: %w", err)
	}
	s.buf = buf
	if err := writeVolatile(s.ck.Path(), buf); err != nil {
		s.failing.Store(&err)
		m.metrics.CheckpointSaved(false)
		return err
	}
	s.written, s.writtenAt = true, gen
	return nil
}

// writeVolatile replaces path with data through a temporary file in the same
// directory (named as the checkpoint's own temporary files, which Load
// removes) and a rename, without fsync.
func writeVolatile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	f, err := os.CreateTemp(dir, state.FileName+".tmp-*")
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}

// encodeLocked encodes the journal if it changed since the last save; both
// locks are held.
func (m *Manager) encodeLocked() (buf []byte, gen uint64, ok bool) {
	s := m.saver
	gen = m.journal.Generation()
	if s.saved && gen == s.savedAt {
		return nil, 0, false
	}
	buf, err := state.Marshal(s.buf[:0], m.journal)
	if err != nil {
		m.log.Error(err, "checkpoint not saved: encoding the journal failed")
		return nil, 0, false
	}
	s.buf = buf
	return buf, gen, true
}

// writeLocked writes an encoded journal of generation gen; the saver's lock
// is held.
func (m *Manager) writeLocked(buf []byte, gen uint64) error {
	s := m.saver
	if err := s.ck.SaveEncoded(buf); err != nil {
		err = fmt.Errorf("save checkpoint: %w", err)
		s.failing.Store(&err)
		m.metrics.CheckpointSaved(false)
		return err
	}
	s.saved, s.savedAt = true, gen
	s.failing.Store(nil)
	m.metrics.CheckpointSaved(true)
	return nil
}
