package state

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"
)

// FuzzUnmarshal: decoding any bytes as a checkpoint never panics, any error
// is a *FormatError, and a checkpoint it accepts round-trips.
func FuzzUnmarshal(f *testing.F) {
	for _, j := range []*Journal{New(), journal(1, 1, 1), journal(2, 5, 2)} {
		b, err := Marshal(nil, j)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := Unmarshal(data)
		if err != nil {
			if _, ok := errors.AsType[*FormatError](err); !ok {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			return
		}
		b, err := Marshal(nil, j)
		if err != nil {
			t.Fatalf("an accepted checkpoint does not encode: %v", err)
		}
		again, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("an accepted checkpoint does not decode after encoding: %v", err)
		}
		if !proto.Equal(again.RestoreState(), j.RestoreState()) {
			t.Fatal("an accepted checkpoint changes in a round trip")
		}
	})
}

// FuzzReplayLog: replaying any bytes as a decision log never panics, any
// error is a *FormatError, the valid prefix it reports replays without error
// to the same journal, and a record is applied whole or not at all.
func FuzzReplayLog(f *testing.F) {
	for _, j := range []*Journal{New(), journal(1, 1, 1), journal(2, 5, 2)} {
		rec, err := j.AppendDelta(logHeader())
		if err != nil {
			f.Fatal(err)
		}
		j.ClearDelta()
		changeAll(j)
		rec, err = j.AppendDelta(rec)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rec)
	}
	f.Add([]byte(logMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		j := New()
		n, err := ReplayLog(j, data)
		if n < 0 || n > len(data) {
			t.Fatalf("valid prefix %d of %d bytes", n, len(data))
		}
		if err != nil {
			if _, ok := errors.AsType[*FormatError](err); !ok {
				t.Fatalf("error %v is not a *FormatError", err)
			}
		}
		if n == 0 {
			return
		}
		again := New()
		if m, err := ReplayLog(again, data[:n]); err != nil || m != n {
			t.Fatalf("the valid prefix of %d bytes replays to %d: %v", n, m, err)
		}
		if !proto.Equal(again.RestoreState(), j.RestoreState()) {
			t.Fatal("the valid prefix replays to another journal")
		}
	})
}
