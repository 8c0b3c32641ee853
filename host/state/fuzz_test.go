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
