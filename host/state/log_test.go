package state

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

// appendDelta writes j's pending changes to ck's log as saveNow does.
func appendDelta(t *testing.T, ck *Checkpoint, j *Journal) {
	t.Helper()
	rec, err := j.AppendDelta(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ck.Append(rec); err != nil {
		t.Fatal(err)
	}
	j.ClearDelta()
}

// changeAll makes one change of every kind to j: adds, an update, a grouped
// update (of a container it then removes), removals.
func changeAll(j *Journal) {
	j.AddPod(pod(9))
	j.AddContainer(container(180), adjustment(180))
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: container(1).GetId(), CpusetCpus: "100-101"})
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: container(0).GetId(), AlsoContainerIds: []string{container(2).GetId(), container(180).GetId()}, CpusetMems: "1"})
	j.RemoveContainer(container(2).GetId())
	j.RemovePod(pod(1).GetId())
	j.AddClaim(claim(7))
	j.RemoveClaim(claim(0).GetClaim().GetUid())
}

// TestLogRestoresDecisionsAfterTheCheckpoint simulates a kill -9 between the
// append before an answer and the next full save: a fresh process's Load
// replays the log over the checkpoint and finds every change.
func TestLogRestoresDecisionsAfterTheCheckpoint(t *testing.T) {
	dir := t.TempDir()
	ck := NewCheckpoint(dir)
	j := journal(2, 3, 2)
	if err := ck.Save(j); err != nil {
		t.Fatal(err)
	}
	j.ClearDelta()
	changeAll(j)
	appendDelta(t, ck, j)
	j.AddContainer(container(181), nil) // a fail-open container, in a second record
	appendDelta(t, ck, j)

	got, err := Load(dir) // the "next process": no Save since the appends
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), j.RestoreState())
}

// TestLogAloneRestoresDecisions: a kill -9 before the first full save leaves
// only the log; it replays over the empty journal.
func TestLogAloneRestoresDecisions(t *testing.T) {
	dir := t.TempDir()
	ck := NewCheckpoint(dir)
	j := journal(1, 2, 1)
	appendDelta(t, ck, j)
	if _, err := os.Stat(ck.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("checkpoint written by Append: %v", err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), j.RestoreState())
}

// TestTrimLogKeepsRecordsAfterTheSavedCopy: records appended while a full
// save of an earlier copy was being written survive its trim, and a crash
// between the save and the trim replays to the same journal.
func TestTrimLogKeepsRecordsAfterTheSavedCopy(t *testing.T) {
	dir := t.TempDir()
	ck := NewCheckpoint(dir)
	j := journal(2, 3, 1)
	appendDelta(t, ck, j)
	saved, err := Marshal(nil, j) // the saver's copy, under the lock
	if err != nil {
		t.Fatal(err)
	}
	mark := ck.LogMark()
	changeAll(j) // a CreateContainer while the saver writes
	appendDelta(t, ck, j)
	if err := ck.SaveEncoded(saved); err != nil {
		t.Fatal(err)
	}

	got, err := NewCheckpoint(dir).Load() // killed before the trim
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), j.RestoreState())

	if err := ck.TrimLog(mark); err != nil {
		t.Fatal(err)
	}
	got, err = NewCheckpoint(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), j.RestoreState())

	if err := ck.Save(j); err != nil {
		t.Fatal(err)
	}
	if err := ck.TrimLog(ck.LogMark()); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(ck.LogPath()); err != nil || st.Size() != logHeaderSize {
		t.Fatalf("log after a save covering every record: %v, %v; want the %d-byte header", st, err, logHeaderSize)
	}
}

// TestLogTornTail: a crash mid-append leaves part of a record. Load replays
// the records before it, sets the tail aside, cuts it from the log, and the
// next append follows the last good record.
func TestLogTornTail(t *testing.T) {
	for name, damage := range map[string]func(b []byte) []byte{
		"torn frame":   func(b []byte) []byte { return b[:len(b)-frameSize-3] },
		"torn payload": func(b []byte) []byte { return b[:len(b)-5] },
		"bad checksum": func(b []byte) []byte { b[len(b)-1] ^= 0xff; return b },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ck := NewCheckpoint(dir)
			j := journal(1, 2, 0)
			appendDelta(t, ck, j)
			want := j.RestoreState()
			good, err := os.ReadFile(ck.LogPath())
			if err != nil {
				t.Fatal(err)
			}
			j.AddContainer(container(3), adjustment(3))
			appendDelta(t, ck, j)
			data, err := os.ReadFile(ck.LogPath())
			if err != nil {
				t.Fatal(err)
			}
			data = damage(data)
			if err := os.WriteFile(ck.LogPath(), data, 0o600); err != nil {
				t.Fatal(err)
			}

			ck2 := NewCheckpoint(dir)
			got, err := ck2.Load()
			lerr, ok := errors.AsType[*LogError](err)
			if !ok {
				t.Fatalf("Load error %v, want a *LogError", err)
			}
			testkit.Equal(t, lerr.Offset, int64(len(good)))
			testkit.EqualProto(t, got.RestoreState(), want)
			aside, err := os.ReadFile(filepath.Join(dir, FileName+".log.corrupt-1"))
			if err != nil || !bytes.Equal(aside, data[len(good):]) {
				t.Fatalf("tail set aside: %q, %v; want %q", aside, err, data[len(good):])
			}
			if now, err := os.ReadFile(ck2.LogPath()); err != nil || !bytes.Equal(now, good) {
				t.Fatalf("log after Load: %d bytes, %v; want the %d good ones", len(now), err, len(good))
			}

			got.AddContainer(container(4), adjustment(4))
			appendDelta(t, ck2, got)
			again, err := NewCheckpoint(dir).Load()
			if err != nil {
				t.Fatalf("Load after the tail was cut: %v", err)
			}
			testkit.EqualProto(t, again.RestoreState(), got.RestoreState())
		})
	}
}

// TestLogBadHeaderSetAside: a log that is not one (or of another version) is
// set aside whole and the checkpoint alone is restored.
func TestLogBadHeaderSetAside(t *testing.T) {
	for name, data := range map[string][]byte{
		"not a log":       []byte("garbage, not a log at all"),
		"a newer version": []byte("NRIWLOG\x00\x00\x00\x00\x03"),
		"torn header":     []byte("NRIWLOG"),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ck := NewCheckpoint(dir)
			j := journal(1, 1, 0)
			if err := ck.Save(j); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ck.LogPath(), data, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := NewCheckpoint(dir).Load()
			if _, ok := errors.AsType[*LogError](err); !ok {
				t.Fatalf("Load error %v, want a *LogError", err)
			}
			testkit.EqualProto(t, got.RestoreState(), j.RestoreState())
			if _, err := os.Stat(ck.LogPath()); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("bad log still in place: %v", err)
			}
			if aside, err := os.ReadFile(filepath.Join(dir, FileName+".log.corrupt-1")); err != nil || !bytes.Equal(aside, data) {
				t.Fatalf("log set aside: %q, %v; want %q", aside, err, data)
			}
		})
	}
}

// TestAppendDeltaOnlyChanges: a record carries what changed since the last
// ClearDelta, not the journal, and nothing when nothing changed.
func TestAppendDeltaOnlyChanges(t *testing.T) {
	j := journal(50, 1000, 10)
	j.ClearDelta()
	if rec, err := j.AppendDelta(nil); err != nil || len(rec) != 0 {
		t.Fatalf("AppendDelta with no change = %d bytes, %v; want none", len(rec), err)
	}
	j.AddContainer(container(1000), adjustment(1000))
	rec, err := j.AppendDelta(nil)
	if err != nil {
		t.Fatal(err)
	}
	one := New()
	one.AddContainer(container(1000), adjustment(1000))
	full, err := one.AppendDelta(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != len(full) {
		t.Fatalf("record of one new container in a journal of 1,000: %d bytes, want the %d of that container alone", len(rec), len(full))
	}
	replayed := New()
	if _, err := ReplayLog(replayed, append(logHeader(), rec...)); err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, replayed.RestoreState(), one.RestoreState())
}

// TestLogAppendsDuringSaves: appends under the caller's lock race full saves
// that copy under it and write and trim outside it, as the agent's saver
// does; whenever the process stops, Load gives the last journal.
func TestLogAppendsDuringSaves(t *testing.T) {
	dir := t.TempDir()
	ck := NewCheckpoint(dir)
	var mu sync.Mutex
	j := journal(1, 0, 0)
	done := make(chan struct{})
	saved := make(chan error, 1)
	go func() {
		for {
			select {
			case <-done:
				saved <- nil
				return
			default:
			}
			mu.Lock()
			data, err := Marshal(nil, j)
			mark := ck.LogMark()
			mu.Unlock()
			if err == nil {
				err = ck.SaveEncoded(data)
			}
			if err == nil {
				err = ck.TrimLog(mark)
			}
			if err != nil {
				saved <- err
				return
			}
		}
	}()
	for i := range 300 {
		mu.Lock()
		j.AddContainer(container(i), adjustment(i))
		if i%3 == 0 {
			j.RemoveContainer(container(i / 2).GetId())
		}
		appendDelta(t, ck, j)
		mu.Unlock()
	}
	close(done)
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	got, err := NewCheckpoint(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), j.RestoreState())
}
