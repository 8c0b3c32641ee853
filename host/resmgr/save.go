package resmgr

import (
	"context"
	"fmt"
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
// must answer in microseconds). The copy, a state.Snapshot, is taken under the
// manager's lock, saveDelay after the first change of a burst: it encodes only
// the records changed since the last one. The file is assembled from it and
// written outside the lock.
type saver struct {
	ck      *state.Checkpoint
	kickC   chan struct{}
	mu      sync.Mutex // serializes saves (Checkpoint is not concurrent-safe)
	savedAt uint64     // journal generation of the last successful (durable) save
	saved   bool
	buf     []byte // the checkpoint file's bytes, reused within a burst of changes
	rec     []byte // saveNow's log record, reused; under the manager's lock
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

// save writes the journal if it changed since the last save, then trims the
// decision log of the records the save covers. Under the manager's lock it
// only takes a snapshot of the journal (encoding what changed since the last
// one) and notes the log's length; the file is assembled and written outside
// it. Lock order: the manager's, then the saver's.
func (m *Manager) save() {
	s := m.saver
	m.mu.Lock()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.dropBufferWhenQuiet()
	snap, gen, ok := m.snapshotLocked()
	mark := s.ck.LogMark() // appends wait for the manager's lock: the copy covers the log up to here
	m.mu.Unlock()
	if !ok {
		return
	}
	buf, err := snap.Marshal(s.buf[:0])
	if err != nil {
		m.log.Error(err, "checkpoint not saved: encoding the journal failed")
		return
	}
	s.buf = buf
	if err := m.writeLocked(buf, gen); err != nil {
		m.log.Error(err, "checkpoint not saved; will retry on the next change")
		return
	}
	if err := s.ck.TrimLog(mark); err != nil {
		m.log.Error(err, "decision log not trimmed; it replays to the same journal and is trimmed at the next save")
	}
}

// dropBufferWhenQuiet lets the checkpoint file's buffer go when no save is
// pending: the burst of changes is over. The buffer holds the whole journal
// (~2 MB with 1,000 containers); it is reused within a burst, not kept
// between bursts. (The journal keeps its records encoded for the next
// Snapshot: host/state/RATIONALE.md.) The saver's lock is held.
func (s *saver) dropBufferWhenQuiet() {
	if len(s.kickC) == 0 {
		s.buf = nil
	}
}

// saveNow writes the decisions made since the last one to the checkpoint's
// decision log before the caller answers, with the manager's lock held (the
// caller's): a decision the runtime acts on is on disk first, so a kill -9
// right after the answer does not lose it.
//
// It appends one record of the records the call changed, with one write and
// no fsync (the page cache outlives the process), which is what a crash of
// the agent needs: the cost is the decision's, not the journal's
// (docs/agent.md has the figures, host/state/RATIONALE.md the choice). Only a
// crash of the node loses it, and with it every container. The background
// saver writes the whole journal durably saveDelay later and trims the log.
// It does not wait for that save's fsync: the log has its own lock.
func (m *Manager) saveNow() error {
	s := m.saver
	rec, err := m.journal.AppendDelta(s.rec[:0])
	if err != nil {
		return fmt.Errorf("encode journal changes: %w", err)
	}
	s.rec = rec
	if len(rec) == 0 {
		return nil
	}
	if err := s.ck.Append(rec); err != nil {
		s.failing.Store(&err)
		m.metrics.CheckpointSaved(false)
		return err
	}
	m.journal.ClearDelta()
	return nil
}

// snapshotLocked takes a snapshot of the journal if it changed since the
// last save; both locks are held.
func (m *Manager) snapshotLocked() (snap *state.Snapshot, gen uint64, ok bool) {
	s := m.saver
	gen = m.journal.Generation()
	if s.saved && gen == s.savedAt {
		return nil, 0, false
	}
	snap, err := m.journal.Snapshot()
	if err != nil {
		m.log.Error(err, "checkpoint not saved: encoding the journal failed")
		return nil, 0, false
	}
	return snap, gen, true
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
