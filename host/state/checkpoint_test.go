package state

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

func TestCheckpointRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		j    *Journal
	}{
		{"empty", New()},
		{"small", journal(1, 1, 1)},
		{"large", journal(100, 2000, 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state") // created by Save
			ck := NewCheckpoint(dir)
			if err := ck.Save(tt.j); err != nil {
				t.Fatal(err)
			}
			got, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			testkit.EqualProto(t, got.RestoreState(), tt.j.RestoreState())
			testkit.Equal(t, got.Counts(), tt.j.Counts())
			info, err := os.Stat(ck.Path())
			if err != nil {
				t.Fatal(err)
			}
			testkit.Equal(t, info.Mode().Perm(), os.FileMode(0o600))
			testkit.Equal(t, slices.Equal(dirNames(t, dir), []string{FileName}), true)
		})
	}
}

func TestSaveReplaces(t *testing.T) {
	dir := t.TempDir()
	ck := NewCheckpoint(dir)
	j := journal(2, 2, 2)
	for range 3 {
		if err := ck.Save(j); err != nil {
			t.Fatal(err)
		}
		j.RemoveContainer("ctr-0000")
		j.AddContainer(container(7), adjustment(7))
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), j.RestoreState())
}

func TestLoadMissing(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "absent")} {
		j, err := Load(dir)
		if err != nil || j == nil || j.Counts() != (Counts{}) {
			t.Fatalf("Load(%s) = %v, %v; want an empty journal", dir, j, err)
		}
	}
}

func TestLoadSetsCorruptAside(t *testing.T) {
	dir := t.TempDir()
	ck := NewCheckpoint(dir)
	good, _ := Marshal(nil, journal(1, 1, 0))
	// checkpoint.corrupt-2 exists already (1 was cleaned up by hand): next is 3.
	writeFile(t, filepath.Join(dir, "checkpoint.corrupt-2"), "old")
	writeFile(t, filepath.Join(dir, "checkpoint.corrupt-x"), "not numbered")
	for i, want := range []string{"checkpoint.corrupt-3", "checkpoint.corrupt-4"} {
		bad := append([]byte(nil), good...)
		bad[len(bad)-1-i] ^= 0xff
		writeFile(t, ck.Path(), string(bad))

		j, err := ck.Load()
		var ce *CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, ErrChecksum) {
			t.Fatalf("Load: %v; want a *CorruptError for a checksum mismatch", err)
		}
		testkit.Equal(t, j.Counts(), Counts{})
		testkit.Equal(t, ce.MovedTo, filepath.Join(dir, want))
		moved, _ := os.ReadFile(ce.MovedTo)
		testkit.Equal(t, string(moved), string(bad))
		_, err = os.Stat(ck.Path())
		testkit.Equal(t, errors.Is(err, os.ErrNotExist), true)
		t.Log(err)
	}
	// The agent carries on: Save, then Load again succeeds.
	if err := ck.Save(journal(1, 1, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := ck.Load(); err != nil {
		t.Fatal(err)
	}
}

// TestInterruptedSave: a crash between writing the temporary file and the rename
// leaves the old checkpoint in force and the temporary file behind; Load ignores
// the temporary file and removes it.
func TestInterruptedSave(t *testing.T) {
	dir := t.TempDir()
	ck := NewCheckpoint(dir)
	old := journal(1, 2, 1)
	if err := ck.Save(old); err != nil {
		t.Fatal(err)
	}
	newer, _ := Marshal(nil, journal(5, 10, 3))
	writeFile(t, filepath.Join(dir, tempPrefix+"123456"), string(newer[:len(newer)/2]))
	writeFile(t, filepath.Join(dir, tempPrefix+"999"), "")

	got, err := ck.Load()
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), old.RestoreState())
	testkit.Equal(t, slices.Equal(dirNames(t, dir), []string{FileName}), true)
}

// TestLoadUnreadable: a checkpoint that cannot be read is set aside like a
// corrupt one, so the next Save does not replace it.
func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, FileName), 0o700); err != nil { // reading a directory fails
		t.Fatal(err)
	}
	ck := NewCheckpoint(dir)
	j, err := ck.Load()
	if err == nil || j == nil {
		t.Fatalf("Load = %v, %v; want an empty journal and an error", j, err)
	}
	var ce *CorruptError
	testkit.Equal(t, errors.As(err, &ce), true)
	testkit.Equal(t, filepath.Base(ce.MovedTo), corruptPrefix+"1")
	if err := ck.Save(journal(1, 1, 0)); err != nil {
		t.Fatal(err)
	}
	testkit.Equal(t, slices.Equal(dirNames(t, dir), []string{FileName, corruptPrefix + "1"}), true)
}

// TestLoadDuplicate: a payload that journals one id twice is not what Save
// wrote; it is set aside rather than one record silently dropped.
func TestLoadDuplicate(t *testing.T) {
	for _, tt := range []struct {
		name string
		rs   *abi.RestoreState
	}{
		{"pod", &abi.RestoreState{Pods: []*abi.PodSandbox{pod(1), pod(1)}}},
		{"container", &abi.RestoreState{Containers: []*abi.Container{container(1), container(2), container(1)}}},
		{"claim", &abi.RestoreState{Claims: []*abi.PreparedClaim{claim(3), claim(3)}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := tt.rs.MarshalVT()
			if err != nil {
				t.Fatal(err)
			}
			data := binary.BigEndian.AppendUint32([]byte(magic), Version)
			data = binary.BigEndian.AppendUint32(data, uint32(len(payload)))
			data = append(binary.BigEndian.AppendUint32(data, crc(payload)), payload...)
			_, err = Unmarshal(data)
			if !errors.Is(err, ErrDuplicate) {
				t.Fatalf("Unmarshal error = %v, want %v", err, ErrDuplicate)
			}
		})
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestSaveEncodedWritesWhatSaveWrites(t *testing.T) {
	j := New()
	j.AddPod(&abi.PodSandbox{Id: "pod-1", Name: "web", Namespace: "default"})
	viaSave, viaEncoded := NewCheckpoint(t.TempDir()), NewCheckpoint(t.TempDir())
	if err := viaSave.Save(j); err != nil {
		t.Fatal(err)
	}
	data, err := Marshal(nil, j)
	if err != nil {
		t.Fatal(err)
	}
	if err := viaEncoded.SaveEncoded(data); err != nil {
		t.Fatal(err)
	}
	got, err := viaEncoded.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !got.RestoreState().EqualVT(j.RestoreState()) {
		t.Fatalf("SaveEncoded then Load = %v, want %v", got.RestoreState(), j.RestoreState())
	}
}
