package wasmbin

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

const meta = "nriwasm.metadata"

// countCustom returns how many custom sections of m are called name.
func countCustom(t *testing.T, m []byte, name string) int {
	t.Helper()
	secs, err := Parse(m)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	count := 0
	for _, s := range secs {
		if s.ID != SectionCustom {
			continue
		}
		if n, err := CustomName(s); err != nil {
			t.Fatal(err)
		} else if n == name {
			count++
		}
	}
	return count
}

var (
	typ  = Section{ID: SectionType, Payload: []byte{0x00}}
	code = Section{ID: SectionCode, Payload: []byte{0x00}}
	// paddedType is a type section whose size is a padded two-byte LEB128.
	paddedType = raw(SectionType, 0x81, 0x00, 0x00)
)

func TestCustomSection(t *testing.T) {
	tests := []struct {
		name    string
		module  []byte
		want    string
		ok      bool
		err     error
		message string
	}{
		{name: "no sections", module: module()},
		{name: "other names", module: module(typ, customSec("name", "x"), customSec(meta+".v2", "y"), customSec("nriwasm", "z"))},
		{name: "found", module: module(typ, customSec("name", "x"), code, customSec(meta, "policy")), want: "policy", ok: true},
		{name: "first of two", module: module(customSec(meta, "one"), typ, customSec(meta, "two")), want: "one", ok: true},
		{name: "empty payload", module: module(customSec(meta, "")), ok: true},
		{name: "truncated", module: raw(SectionCustom, 0x10, 0x01), err: ErrTruncated, message: "section 0 at offset 8"},
		{name: "bad name before match", module: append(module(Section{ID: SectionCustom, Payload: []byte{0x05}}), module(customSec(meta, "x"))[8:]...),
			err: ErrTruncated, message: "custom section name: at offset 11"},
		{name: "bad header", module: []byte("\x00asm\x02\x00\x00\x00"), err: ErrMalformed, message: "version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := CustomSection(tt.module, meta)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.message) || !strings.Contains(err.Error(), meta) {
					t.Fatalf("error = %v, want %v containing %q and the section name", err, tt.err, tt.message)
				}
				return
			}
			if err != nil || ok != tt.ok || string(got) != tt.want {
				t.Fatalf("CustomSection = %q, %v, %v; want %q, %v, nil", got, ok, err, tt.want, tt.ok)
			}
		})
	}
}

func TestSetCustomSection(t *testing.T) {
	tail := module(customSec(meta, "new"))[len(Header):]
	tests := []struct {
		name   string
		module []byte
		want   []byte // nil: only check the round trip
	}{
		{"empty module", module(), module(customSec(meta, "new"))},
		{"added at the end", module(typ, code, customSec("name", "n")), module(typ, code, customSec("name", "n"), customSec(meta, "new"))},
		{"replaced in the middle", module(typ, customSec(meta, "old"), code), module(typ, code, customSec(meta, "new"))},
		{"all copies replaced", module(customSec(meta, "a"), typ, customSec(meta, "b"), code, customSec(meta, "c")), module(typ, code, customSec(meta, "new"))},
		{"similar names kept", module(customSec(meta+"x", "a"), customSec(meta, "b")), module(customSec(meta+"x", "a"), customSec(meta, "new"))},
		{"other sections byte for byte", append(bytes.Clone(paddedType), module(customSec(meta, "old"))[8:]...), append(bytes.Clone(paddedType), tail...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := bytes.Clone(tt.module)
			out, err := SetCustomSection(in, meta, []byte("new"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(in, tt.module) {
				t.Error("input modified")
			}
			if !bytes.Equal(out, tt.want) {
				t.Errorf("got  % x\nwant % x", out, tt.want)
			}
			// Replacing again still leaves exactly one section, at the end.
			again, err := SetCustomSection(out, meta, []byte("newer"))
			if err != nil {
				t.Fatal(err)
			}
			if n := countCustom(t, again, meta); n != 1 {
				t.Fatalf("%d sections called %s after two replacements, want 1", n, meta)
			}
			if got, ok, err := CustomSection(again, meta); err != nil || !ok || string(got) != "newer" {
				t.Fatalf("round trip: %q, %v, %v", got, ok, err)
			}
			if !bytes.HasSuffix(again, module(customSec(meta, "newer"))[len(Header):]) {
				t.Error("section not last")
			}
		})
	}
}

func TestSetCustomSectionErrors(t *testing.T) {
	tests := []struct {
		name    string
		module  []byte
		section string
		want    error
		message string
	}{
		{"truncated", raw(SectionType, 0x05, 0x00), meta, ErrTruncated, "section 1 at offset 8"},
		{"bad custom name", module(typ, Section{ID: SectionCustom, Payload: []byte{0x80}}), meta, ErrTruncated, "custom section name: at offset 13"},
		{"out of order", module(code, typ), meta, ErrMalformed, "offset 11"},
		{"invalid UTF-8 name", module(), "\xff", nil, "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := SetCustomSection(tt.module, tt.section, nil)
			if err == nil || out != nil {
				t.Fatalf("SetCustomSection = % x, %v; want an error", out, err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.message) || !strings.Contains(err.Error(), "setting custom section") {
				t.Fatalf("error %q does not contain %q", err, tt.message)
			}
		})
	}
}
