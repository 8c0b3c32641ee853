package interrupt

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// b concatenates byte snippets.
func b(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// n returns count copies of byte c.
func n(count int, c byte) []byte { return bytes.Repeat([]byte{c}, count) }

// instructionCases are single instructions; each one is decoded alone and
// must be consumed exactly, and every proper prefix must be truncated.
var instructionCases = []struct {
	name string
	code []byte
}{
	{"unreachable", []byte{0x00}},
	{"nop", []byte{0x01}},
	{"block empty", []byte{0x02, 0x40}},
	{"loop i32", []byte{0x03, 0x7f}},
	{"if v128", []byte{0x04, 0x7b}},
	{"block type index", []byte{0x02, 0x05}},
	{"block type index two bytes", []byte{0x02, 0x80, 0x01}},
	{"loop ref null func", []byte{0x03, 0x63, 0x70}},
	{"block ref type index", []byte{0x02, 0x64, 0x83, 0x01}},
	{"else", []byte{0x05}},
	{"end", []byte{0x0b}},
	{"legacy try", []byte{0x06, 0x40}},
	{"legacy catch", []byte{0x07, 0x00}},
	{"throw", []byte{0x08, 0x01}},
	{"rethrow", []byte{0x09, 0x00}},
	{"throw_ref", []byte{0x0a}},
	{"br", []byte{0x0c, 0x02}},
	{"br_if", []byte{0x0d, 0x80, 0x01}},
	{"br_table", []byte{0x0e, 0x03, 0x00, 0x01, 0x82, 0x01, 0x00}},
	{"br_table empty", []byte{0x0e, 0x00, 0x03}},
	{"return", []byte{0x0f}},
	{"call", []byte{0x10, 0xff, 0xff, 0x03}},
	{"call_indirect", []byte{0x11, 0x02, 0x00}},
	{"call_indirect table 1", []byte{0x11, 0x02, 0x01}},
	{"return_call", []byte{0x12, 0x05}},
	{"return_call_indirect", []byte{0x13, 0x02, 0x01}},
	{"call_ref", []byte{0x14, 0x00}},
	{"return_call_ref", []byte{0x15, 0x03}},
	{"delegate", []byte{0x18, 0x00}},
	{"catch_all", []byte{0x19}},
	{"drop", []byte{0x1a}},
	{"select", []byte{0x1b}},
	{"select t", []byte{0x1c, 0x01, 0x7f}},
	{"select t ref", []byte{0x1c, 0x02, 0x63, 0x70, 0x6f}},
	{"try_table", []byte{0x1f, 0x40, 0x04, 0x00, 0x01, 0x02, 0x01, 0x03, 0x04, 0x02, 0x05, 0x03, 0x06}},
	{"try_table no catch", []byte{0x1f, 0x7f, 0x00}},
	{"local.get", []byte{0x20, 0x00}},
	{"local.set", []byte{0x21, 0x01}},
	{"local.tee", []byte{0x22, 0x02}},
	{"global.get", []byte{0x23, 0x03}},
	{"global.set", []byte{0x24, 0x80, 0x02}},
	{"table.get", []byte{0x25, 0x00}},
	{"table.set", []byte{0x26, 0x01}},
	{"i32.load", []byte{0x28, 0x02, 0x00}},
	{"i64.store large offset", []byte{0x37, 0x03, 0x80, 0x80, 0x04}},
	{"i32.load multi-memory", []byte{0x28, 0x42, 0x01, 0x08}},
	{"i64.load memory64 offset", b([]byte{0x29, 0x03}, n(9, 0xff), []byte{0x01})},
	{"memory.size", []byte{0x3f, 0x00}},
	{"memory.grow memory 1", []byte{0x40, 0x01}},
	{"i32.const -1", []byte{0x41, 0x7f}},
	{"i32.const 3", []byte{0x41, 0x03}},
	{"i32.const max", []byte{0x41, 0xff, 0xff, 0xff, 0xff, 0x07}},
	{"i64.const min", b([]byte{0x42}, n(9, 0x80), []byte{0x7f})},
	{"f32.const", []byte{0x43, 0x03, 0x0b, 0x00, 0x3f}},
	{"f64.const", []byte{0x44, 0x03, 0x03, 0x03, 0x03, 0x0b, 0x0b, 0x0b, 0x0b}},
	{"i32.eqz", []byte{0x45}},
	{"i32.add", []byte{0x6a}},
	{"f64.reinterpret_i64", []byte{0xbf}},
	{"i64.extend32_s", []byte{0xc4}},
	{"ref.null func", []byte{0xd0, 0x70}},
	{"ref.null type index", []byte{0xd0, 0x05}},
	{"ref.is_null", []byte{0xd1}},
	{"ref.func", []byte{0xd2, 0x07}},
	{"ref.eq", []byte{0xd3}},
	{"ref.as_non_null", []byte{0xd4}},
	{"br_on_null", []byte{0xd5, 0x01}},
	{"br_on_non_null", []byte{0xd6, 0x00}},
	{"i32.trunc_sat_f32_s", []byte{0xfc, 0x00}},
	{"i64.trunc_sat_f64_u", []byte{0xfc, 0x07}},
	{"memory.init", []byte{0xfc, 0x08, 0x01, 0x00}},
	{"memory.init padded sub-opcode", []byte{0xfc, 0x88, 0x00, 0x01, 0x00}},
	{"data.drop", []byte{0xfc, 0x09, 0x02}},
	{"memory.copy", []byte{0xfc, 0x0a, 0x00, 0x01}},
	{"memory.fill", []byte{0xfc, 0x0b, 0x00}},
	{"table.init", []byte{0xfc, 0x0c, 0x01, 0x00}},
	{"elem.drop", []byte{0xfc, 0x0d, 0x00}},
	{"table.copy", []byte{0xfc, 0x0e, 0x00, 0x01}},
	{"table.grow", []byte{0xfc, 0x0f, 0x00}},
	{"table.size", []byte{0xfc, 0x10, 0x01}},
	{"table.fill", []byte{0xfc, 0x11, 0x00}},
	{"v128.load", []byte{0xfd, 0x00, 0x04, 0x00}},
	{"v128.load64_splat", []byte{0xfd, 0x0a, 0x03, 0x10}},
	{"v128.store", []byte{0xfd, 0x0b, 0x04, 0x10}},
	{"v128.const", b([]byte{0xfd, 0x0c}, n(16, 0x03))},
	{"i8x16.shuffle", b([]byte{0xfd, 0x0d}, n(16, 0x0b))},
	{"i8x16.swizzle", []byte{0xfd, 0x0e}},
	{"i8x16.extract_lane_s", []byte{0xfd, 0x15, 0x0f}},
	{"f64x2.replace_lane", []byte{0xfd, 0x22, 0x01}},
	{"v128.load8_lane", []byte{0xfd, 0x54, 0x00, 0x00, 0x0f}},
	{"v128.store64_lane", []byte{0xfd, 0x5b, 0x03, 0x08, 0x01}},
	{"v128.load32_zero", []byte{0xfd, 0x5c, 0x02, 0x00}},
	{"v128.load64_zero", []byte{0xfd, 0x5d, 0x03, 0x00}},
	{"f64x2.promote_low_f32x4", []byte{0xfd, 0x5f}},
	{"i32x4.add", []byte{0xfd, 0xae, 0x01}},
	{"f64x2.convert_low_i32x4_u", []byte{0xfd, 0xff, 0x01}},
	{"i8x16.relaxed_swizzle", []byte{0xfd, 0x80, 0x02}},
	{"i32x4.relaxed_dot_i8x16_i7x16_add_s", []byte{0xfd, 0x93, 0x02}},
	{"memory.atomic.notify", []byte{0xfe, 0x00, 0x02, 0x00}},
	{"memory.atomic.wait64", []byte{0xfe, 0x02, 0x03, 0x08}},
	{"atomic.fence", []byte{0xfe, 0x03, 0x00}},
	{"i32.atomic.load", []byte{0xfe, 0x10, 0x02, 0x00}},
	{"i64.atomic.rmw32.cmpxchg_u", []byte{0xfe, 0x4e, 0x02, 0x04}},
}

func TestSkipInstruction(t *testing.T) {
	for _, tt := range instructionCases {
		t.Run(tt.name, func(t *testing.T) {
			// A trailing byte checks that decoding stops at the right place.
			r := wasmbin.NewReader(b(tt.code, []byte{0x0b}), 0)
			op, err := skipInstruction(r)
			if err != nil {
				t.Fatalf("skipInstruction(% x): %v", tt.code, err)
			}
			if op != tt.code[0] {
				t.Errorf("opcode = 0x%02x, want 0x%02x", op, tt.code[0])
			}
			if r.Remaining() != 1 {
				t.Errorf("consumed %d bytes, want %d", len(tt.code)+1-r.Remaining(), len(tt.code))
			}
		})
	}
}

func TestSkipInstructionTruncated(t *testing.T) {
	for _, tt := range instructionCases {
		t.Run(tt.name, func(t *testing.T) {
			for k := 0; k < len(tt.code); k++ {
				_, err := skipInstruction(wasmbin.NewReader(tt.code[:k], 0))
				if !errors.Is(err, wasmbin.ErrTruncated) {
					t.Fatalf("prefix % x: error = %v, want truncated", tt.code[:k], err)
				}
			}
		})
	}
}

func TestSkipInstructionErrors(t *testing.T) {
	tests := []struct {
		name    string
		code    []byte
		want    error
		message string
	}{
		{"unknown 0x16", []byte{0x16}, errUnsupported, "unsupported opcode 0x16 at offset 10"},
		{"gc prefix", []byte{0xfb, 0x00}, errUnsupported, "unsupported opcode 0xfb at offset 10"},
		{"unknown 0xff", []byte{0xff}, errUnsupported, "0xff"},
		{"unknown 0xfc sub-opcode", []byte{0xfc, 0x12}, errUnsupported, "unsupported opcode 0xfc 0x12 at offset 10"},
		{"simd gap", []byte{0xfd, 0x9a, 0x01}, errUnsupported, "0xfd 0x9a"},
		{"simd past relaxed", []byte{0xfd, 0x94, 0x02}, errUnsupported, "0xfd 0x114"},
		{"threads gap", []byte{0xfe, 0x04}, errUnsupported, "0xfe 0x04"},
		{"threads past end", []byte{0xfe, 0x4f}, errUnsupported, "0xfe 0x4f"},
		{"fence reserved byte", []byte{0xfe, 0x03, 0x01}, wasmbin.ErrMalformed, "reserved byte"},
		{"catch kind", []byte{0x1f, 0x40, 0x01, 0x04, 0x00}, wasmbin.ErrMalformed, "catch kind 0x04"},
		{"negative block type", []byte{0x02, 0xff, 0x7f}, wasmbin.ErrMalformed, "block type"},
		{"bad select type", []byte{0x1c, 0x01, 0x05}, wasmbin.ErrMalformed, "value type 0x05"},
		{"multi-byte abstract heap type", []byte{0xd0, 0xf0, 0x7f}, wasmbin.ErrMalformed, "heap type"},
		{"u32 overflow", []byte{0x20, 0xff, 0xff, 0xff, 0xff, 0x7f}, wasmbin.ErrOverflow, "opcode 0x20 at offset 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := skipInstruction(wasmbin.NewReader(tt.code, 10))
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("error %q does not contain %q", err, tt.message)
			}
		})
	}
}

func TestRewriteBody(t *testing.T) {
	check := appendCheck(nil, 2, 1)
	tests := []struct {
		name  string
		body  []byte
		want  []byte
		loops int
	}{
		{
			name:  "no loop, immediates that look like loop",
			body:  []byte{0x00, 0x41, 0x03, 0x44, 3, 3, 3, 3, 3, 3, 3, 3, 0x1a, 0x1a, 0x0b},
			want:  []byte{0x00, 0x41, 0x03, 0x44, 3, 3, 3, 3, 3, 3, 3, 3, 0x1a, 0x1a, 0x0b},
			loops: 0,
		},
		{
			name:  "nested loops with locals",
			body:  []byte{0x02, 0x01, 0x7f, 0x01, 0x63, 0x70, 0x03, 0x40, 0x03, 0x05, 0x0c, 0x00, 0x0b, 0x0b, 0x0b},
			want:  b([]byte{0x02, 0x01, 0x7f, 0x01, 0x63, 0x70, 0x03, 0x40}, check, []byte{0x03, 0x05}, check, []byte{0x0c, 0x00, 0x0b, 0x0b, 0x0b}),
			loops: 2,
		},
		{
			name:  "loop as last instruction before end",
			body:  []byte{0x00, 0x03, 0x40, 0x0b, 0x0b},
			want:  b([]byte{0x00, 0x03, 0x40}, check, []byte{0x0b, 0x0b}),
			loops: 1,
		},
		{
			name:  "function indices from the poll index up move",
			body:  []byte{0x00, 0x10, 0x00, 0x10, 0x01, 0x12, 0x05, 0xd2, 0x7f, 0x1a, 0x41, 0x10, 0x1a, 0x0b},
			want:  []byte{0x00, 0x10, 0x00, 0x10, 0x02, 0x12, 0x06, 0xd2, 0x80, 0x01, 0x1a, 0x41, 0x10, 0x1a, 0x0b},
			loops: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, loops, err := rewriteBody(tt.body, 0, check, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) || loops != tt.loops {
				t.Fatalf("got % x (%d loops), want % x (%d loops)", got, loops, tt.want, tt.loops)
			}
		})
	}
}

func TestAppendCheck(t *testing.T) {
	got := appendCheck(nil, 200, 3)
	want := []byte{0x23, 0xc8, 0x01, 0x41, 0x01, 0x6b, 0x24, 0xc8, 0x01, 0x23, 0xc8, 0x01, 0x41, 0x00, 0x4c, 0x04, 0x40, 0x10, 0x03, 0x0b}
	if !bytes.Equal(got, want) {
		t.Fatalf("appendCheck(200, 3) = % x, want % x", got, want)
	}
}
