package resmgr

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nriwasm/nriwasm/host/state"
)

// saveDelay is how long the saver lets a burst of changes gather before it
// copies the journal: one save then covers the whole burst. It bounds what a
// crash can lose (together with the write itself); Stop always saves.
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
	savedAt uint64     // journal generation of the last successful save
	saved   bool
	buf     []byte // the encoded journal, reused
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

// save writes the journal if it changed since the last save. Under the lock it
// only encodes the journal (into a reused buffer); the write happens outside.
func (m *Manager) save() {
	s := m.saver
	s.mu.Lock()
	defer s.mu.Unlock()
	m.mu.Lock()
	gen := m.journal.Generation()
	if s.saved && gen == s.savedAt {
		m.mu.Unlock()
		return
	}
	buf, err := state.Marshal(s.buf[:0], m.journal)
	m.mu.Unlock()
	if err != nil {
		m.log.Error(err, "checkpoint not saved: encoding the journal failed")
		return
	}
	s.buf = buf
	if err := s.ck.SaveEncoded(buf); err != nil {
		m.log.Error(err, "checkpoint not saved; will retry on the next change")
		s.failing.Store(&err)
		m.metrics.CheckpointSaved(false)
		return
	}
	s.saved, s.savedAt = true, gen
	s.failing.Store(nil)
	m.metrics.CheckpointSaved(true)
}
