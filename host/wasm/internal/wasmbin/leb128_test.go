package wasmbin

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestDecodeUnsigned(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		bits  uint
		want  uint64
		n     int
		error error
	}{
		{name: "zero", in: []byte{0x00}, bits: 32, want: 0, n: 1},
		{name: "one byte max", in: []byte{0x7f}, bits: 32, want: 127, n: 1},
		{name: "two bytes", in: []byte{0x80, 0x01}, bits: 32, want: 128, n: 2},
		{name: "padded zero", in: []byte{0x80, 0x80, 0x00}, bits: 32, want: 0, n: 3},
		{name: "stops at terminator", in: []byte{0xe5, 0x8e, 0x26, 0xff}, bits: 32, want: 624485, n: 3},
		{name: "u32 max", in: []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, bits: 32, want: math.MaxUint32, n: 5},
		{name: "u64 max", in: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, bits: 64, want: math.MaxUint64, n: 10},
		{name: "u32 overflow bits", in: []byte{0xff, 0xff, 0xff, 0xff, 0x1f}, bits: 32, error: ErrOverflow},
		{name: "u32 too long", in: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, bits: 32, error: ErrOverflow},
		{name: "u64 overflow bits", in: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, bits: 64, error: ErrOverflow},
		{name: "empty", in: nil, bits: 32, error: ErrTruncated},
		{name: "truncated", in: []byte{0x80, 0x80}, bits: 32, error: ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, err := decodeUnsigned(tt.in, tt.bits)
			if tt.error != nil {
				if !errors.Is(err, tt.error) {
					t.Fatalf("error = %v, want %v", err, tt.error)
				}
				return
			}
			if err != nil || got != tt.want || n != tt.n {
				t.Fatalf("got (%d, %d, %v), want (%d, %d, nil)", got, n, err, tt.want, tt.n)
			}
		})
	}
}

func TestDecodeSigned(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		bits  uint
		want  int64
		n     int
		error error
	}{
		{name: "zero", in: []byte{0x00}, bits: 32, want: 0, n: 1},
		{name: "minus one", in: []byte{0x7f}, bits: 32, want: -1, n: 1},
		{name: "63", in: []byte{0x3f}, bits: 32, want: 63, n: 1},
		{name: "64", in: []byte{0xc0, 0x00}, bits: 32, want: 64, n: 2},
		{name: "minus 128", in: []byte{0x80, 0x7f}, bits: 32, want: -128, n: 2},
		{name: "padded minus one", in: []byte{0xff, 0xff, 0x7f}, bits: 32, want: -1, n: 3},
		{name: "s32 max", in: []byte{0xff, 0xff, 0xff, 0xff, 0x07}, bits: 32, want: math.MaxInt32, n: 5},
		{name: "s32 min", in: []byte{0x80, 0x80, 0x80, 0x80, 0x78}, bits: 32, want: math.MinInt32, n: 5},
		{name: "s33 type index", in: []byte{0x80, 0x80, 0x80, 0x80, 0x0f}, bits: 33, want: 0xf0000000, n: 5},
		{name: "s64 min", in: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, bits: 64, want: math.MinInt64, n: 10},
		{name: "s64 max", in: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, bits: 64, want: math.MaxInt64, n: 10},
		{name: "s32 overflow positive", in: []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, bits: 32, error: ErrOverflow},
		{name: "s32 overflow negative", in: []byte{0x80, 0x80, 0x80, 0x80, 0x70}, bits: 32, error: ErrOverflow},
		{name: "s64 bad last byte", in: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, bits: 64, error: ErrOverflow},
		{name: "s32 too long", in: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, bits: 32, error: ErrOverflow},
		{name: "truncated", in: []byte{0xff}, bits: 64, error: ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, err := decodeSigned(tt.in, tt.bits)
			if tt.error != nil {
				if !errors.Is(err, tt.error) {
					t.Fatalf("error = %v, want %v", err, tt.error)
				}
				return
			}
			if err != nil || got != tt.want || n != tt.n {
				t.Fatalf("got (%d, %d, %v), want (%d, %d, nil)", got, n, err, tt.want, tt.n)
			}
		})
	}
}

func TestAppendU32(t *testing.T) {
	tests := []struct {
		v    uint32
		want []byte
	}{
		{0, []byte{0x00}},
		{127, []byte{0x7f}},
		{128, []byte{0x80, 0x01}},
		{624485, []byte{0xe5, 0x8e, 0x26}},
		{math.MaxUint32, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.v), func(t *testing.T) {
			got := AppendU32([]byte{0xaa}, tt.v)
			if string(got[1:]) != string(tt.want) || got[0] != 0xaa {
				t.Fatalf("AppendU32(%d) = % x, want aa % x", tt.v, got, tt.want)
			}
			back, n, err := decodeUnsigned(got[1:], 32)
			if err != nil || back != uint64(tt.v) || n != len(tt.want) {
				t.Fatalf("round trip: (%d, %d, %v)", back, n, err)
			}
		})
	}
}

func TestReaderErrorsNameOffset(t *testing.T) {
	r := NewReader([]byte{0x05, 'a', 'b'}, 100)
	_, err := r.Name()
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("error = %v, want truncated", err)
	}
	if want := "at offset 101"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not mention %q", err, want)
	}
}

func TestAppendNameRoundTrip(t *testing.T) {
	buf := AppendName([]byte{0xaa}, "héllo")
	r := NewReader(buf, 0)
	if c, err := r.Byte(); err != nil || c != 0xaa {
		t.Fatalf("Byte() = %x, %v", c, err)
	}
	if got, err := r.Name(); err != nil || got != "héllo" || r.Remaining() != 0 {
		t.Fatalf("Name() = %q, %v with %d bytes left", got, err, r.Remaining())
	}
	if r.Offset() != len(buf) {
		t.Fatalf("Offset() = %d, want %d", r.Offset(), len(buf))
	}
}

func TestReaderMethods(t *testing.T) {
	// u32 624485, u64 max, s32 -128, s33 0xf0000000, s64 -1, 2 raw bytes.
	buf := []byte{
		0xe5, 0x8e, 0x26,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		0x80, 0x7f,
		0x80, 0x80, 0x80, 0x80, 0x0f,
		0x7f,
		0x01, 0x02,
	}
	r := NewReader(buf, 0)
	u32, err1 := r.U32()
	u64, err2 := r.U64()
	s32, err3 := r.S32()
	s33, err4 := r.S33()
	s64, err5 := r.S64()
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		t.Fatal(err)
	}
	if u32 != 624485 || u64 != math.MaxUint64 || s32 != -128 || s33 != 0xf0000000 || s64 != -1 {
		t.Fatalf("got %d %d %d %d %d", u32, u64, s32, s33, s64)
	}
	if c, err := r.Peek(); err != nil || c != 0x01 || r.Remaining() != 2 {
		t.Fatalf("Peek() = %x, %v with %d left", c, err, r.Remaining())
	}
	if err := r.Skip(1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Bytes(2); !errors.Is(err, ErrTruncated) || !errors.Is(err, ErrMalformed) {
		t.Fatalf("Bytes past the end: error = %v, want truncated", err)
	}
	if _, err := r.Bytes(1); err != nil || r.Remaining() != 0 {
		t.Fatalf("Bytes(1): %v, %d left", err, r.Remaining())
	}
	if _, err := r.Peek(); !errors.Is(err, ErrTruncated) {
		t.Fatalf("Peek at end: error = %v, want truncated", err)
	}
}
