package wasmbin

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// module encodes a module from sections.
func module(sections ...Section) []byte { return Encode(sections, 0) }

// raw appends bytes after the module header.
func raw(b ...byte) []byte { return append([]byte(Header), b...) }

// customSec returns a custom section called name holding data.
func customSec(name, data string) Section {
	return Section{ID: SectionCustom, Payload: append(AppendName(nil, name), data...)}
}

func TestParseEncodeRoundTrip(t *testing.T) {
	in := module(
		customSec("first", "a"),
		Section{ID: SectionType, Payload: []byte{0x00}},
		Section{ID: SectionTag, Payload: []byte{0x00}},
		Section{ID: SectionGlobal, Payload: []byte{0x00}},
		customSec("between", ""),
		Section{ID: SectionDataCount, Payload: []byte{0x00}},
		Section{ID: SectionCode, Payload: bytes.Repeat([]byte{0x01}, 200)},
		customSec("last", "z"),
	)
	secs, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	var ids []byte
	for _, s := range secs {
		ids = append(ids, s.ID)
		if !bytes.Equal(in[s.Offset:s.end()], s.Payload) {
			t.Errorf("section %d: Offset %d does not locate its payload", s.ID, s.Offset)
		}
	}
	if want := []byte{0, 1, 13, 6, 0, 12, 10, 0}; !bytes.Equal(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
	if name, err := CustomName(secs[4]); err != nil || name != "between" {
		t.Errorf("CustomName = %q, %v", name, err)
	}
	if out := Encode(secs, len(in)); !bytes.Equal(out, in) {
		t.Errorf("Encode(Parse(m)) != m:\n% x\n% x", out, in)
	}
}

func TestParseErrors(t *testing.T) {
	typ := Section{ID: SectionType, Payload: []byte{0x00}}
	tests := []struct {
		name    string
		module  []byte
		want    error
		message string
	}{
		{"empty", nil, ErrTruncated, "header"},
		{"short header", []byte(Header[:7]), ErrTruncated, "header"},
		{"bad magic", []byte("\x00asn\x01\x00\x00\x00"), ErrMalformed, "magic"},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"), ErrMalformed, "version"},
		{"truncated section", raw(SectionType, 0x05, 0x00), ErrTruncated, "section 1 at offset 8"},
		{"truncated section size", raw(SectionType, 0x80), ErrTruncated, "size of section 1"},
		{"overlong section size", raw(SectionType, 0xff, 0xff, 0xff, 0xff, 0x7f), ErrOverflow, "at offset 9"},
		{"unknown section", module(Section{ID: 14}), ErrMalformed, "unknown section id 14"},
		{"out of order", module(Section{ID: SectionFunction}, typ), ErrMalformed, "out of order"},
		{"duplicate", module(typ, typ), ErrMalformed, "section 1 at offset 11 is duplicated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secs, err := Parse(tt.module)
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
			if secs != nil {
				t.Error("sections returned with an error")
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("error %q does not contain %q", err, tt.message)
			}
		})
	}
}

func TestInsert(t *testing.T) {
	tests := []struct {
		name string
		ids  []byte
		add  byte
		want []byte
	}{
		{"global after tag", []byte{1, 3, 5, 13, 8, 9, 12, 10, 11, 0}, SectionGlobal, []byte{1, 3, 5, 13, 6, 8, 9, 12, 10, 11, 0}},
		{"export before start", []byte{1, 3, 6, 8, 10}, SectionExport, []byte{1, 3, 6, 7, 8, 10}},
		{"before trailing custom", []byte{0, 1, 3, 0}, SectionGlobal, []byte{0, 1, 3, 6, 0}},
		{"custom before code stays first", []byte{1, 0, 10}, SectionExport, []byte{1, 0, 7, 10}},
		{"only custom", []byte{0}, SectionGlobal, []byte{6, 0}},
		{"empty", nil, SectionType, []byte{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var secs []Section
			for _, id := range tt.ids {
				secs = append(secs, Section{ID: id})
			}
			var got []byte
			for _, s := range Insert(secs, Section{ID: tt.add}) {
				got = append(got, s.ID)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}
