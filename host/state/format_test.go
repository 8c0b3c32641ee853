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

// TestCorrupt: every kind of damage is named by Unmarshal, and Load sets the file
// aside and starts empty.
func TestCorrupt(t *testing.T) {
	good, err := Marshal(nil, journal(3, 5, 2))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"magic only", good[:8], ErrTruncated},
		{"header only", good[:headerSize-1], ErrTruncated},
		{"payload cut", good[:len(good)-1], ErrTruncated},
		{"trailing byte", append(edit(func(b []byte) []byte { return b }), 0), ErrTrailing},
		{"payload byte flipped", edit(func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }), ErrChecksum},
		{"checksum byte flipped", edit(func(b []byte) []byte { b[17] ^= 1; return b }), ErrChecksum},
		{"length byte flipped", edit(func(b []byte) []byte { b[12] ^= 1; return b }), ErrTruncated},
		{"magic byte flipped", edit(func(b []byte) []byte { b[0] ^= 1; return b }), ErrNotCheckpoint},
		{"garbage", []byte("{\"pods\": []}\n this is not a checkpoint"), ErrNotCheckpoint},
		{"future version", edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 2); return b }), ErrVersion},
		{"future version, short header", edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 9); return b[:12] }), ErrVersion},
		{"checksummed garbage payload", func() []byte {
			payload := []byte{0xff, 0xff, 0xff}
			b := edit(func(b []byte) []byte { return b[:headerSize] })
			binary.BigEndian.PutUint32(b[12:], uint32(len(payload)))
			binary.BigEndian.PutUint32(b[16:], crc(payload))
			return append(b, payload...)
		}(), ErrUndecodable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Unmarshal(tt.data)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			var fe *FormatError
			testkit.Equal(t, errors.As(err, &fe), true)
			testkit.Equal(t, j == nil, true)

			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, FileName), string(tt.data))
			j, err = Load(dir)
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, tt.want) {
				t.Fatalf("Load: %v; want a *CorruptError for %v", err, tt.want)
			}
			testkit.Equal(t, j.Counts(), Counts{})
			testkit.Equal(t, ce.MovedTo, filepath.Join(dir, "checkpoint.corrupt-1"))
			moved, _ := os.ReadFile(ce.MovedTo)
			testkit.Equal(t, string(moved), string(tt.data))
			testkit.Equal(t, slices.Equal(dirNames(t, dir), []string{"checkpoint.corrupt-1"}), true)
			t.Log(err)
		})
	}
}

// TestMarshalOrder: records come out sorted whatever the insertion order, so
// journals whose maps hold at most one entry marshal to identical bytes (map
// entries follow Go's map order).
func TestMarshalOrder(t *testing.T) {
	build := func(order []int) *Journal {
		j := New()
		for _, i := range order {
			p, c := pod(i), container(i)
			p.Labels, p.Annotations, c.Labels, c.Annotations = nil, nil, nil, nil
			j.AddPod(p)
			j.AddContainer(c, &abi.ContainerAdjustment{CpusetCpus: "1"})
			j.AddClaim(claim(i))
		}
		return j
	}
	a, err := Marshal(nil, build([]int{0, 1, 2, 3}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Marshal(nil, build([]int{3, 1, 0, 2}))
	if string(a) != string(b) {
		t.Fatalf("insertion order changed the checkpoint (%d and %d bytes)", len(a), len(b))
	}
}

func TestMarshalAppends(t *testing.T) {
	data, err := Marshal([]byte("prefix"), journal(1, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	testkit.Equal(t, string(data[:6]), "prefix")
	j, err := Unmarshal(data[6:])
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, j.RestoreState(), journal(1, 1, 1).RestoreState())
}
