package interrupt

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
		{name: "u32 overflow bits", in: []byte{0xff, 0xff, 0xff, 0xff, 0x1f}, bits: 32, error: errOverflow},
		{name: "u32 too long", in: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, bits: 32, error: errOverflow},
		{name: "u64 overflow bits", in: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, bits: 64, error: errOverflow},
		{name: "empty", in: nil, bits: 32, error: errTruncated},
		{name: "truncated", in: []byte{0x80, 0x80}, bits: 32, error: errTruncated},
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
		{name: "s32 overflow positive", in: []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, bits: 32, error: errOverflow},
		{name: "s32 overflow negative", in: []byte{0x80, 0x80, 0x80, 0x80, 0x70}, bits: 32, error: errOverflow},
		{name: "s64 bad last byte", in: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, bits: 64, error: errOverflow},
		{name: "s32 too long", in: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, bits: 32, error: errOverflow},
		{name: "truncated", in: []byte{0xff}, bits: 64, error: errTruncated},
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
			got := appendU32([]byte{0xaa}, tt.v)
			if string(got[1:]) != string(tt.want) || got[0] != 0xaa {
				t.Fatalf("appendU32(%d) = % x, want aa % x", tt.v, got, tt.want)
			}
			back, n, err := decodeUnsigned(got[1:], 32)
			if err != nil || back != uint64(tt.v) || n != len(tt.want) {
				t.Fatalf("round trip: (%d, %d, %v)", back, n, err)
			}
		})
	}
}

func TestReaderErrorsNameOffset(t *testing.T) {
	r := &reader{buf: []byte{0x05, 'a', 'b'}, base: 100}
	_, err := r.name()
	if !errors.Is(err, errTruncated) {
		t.Fatalf("error = %v, want truncated", err)
	}
	if want := "at offset 101"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not mention %q", err, want)
	}
}
