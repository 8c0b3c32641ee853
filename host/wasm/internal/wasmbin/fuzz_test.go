package wasmbin

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse: Parse never panics, every error wraps ErrMalformed, and a module
// it accepts encodes back to sections that parse the same.
func FuzzParse(f *testing.F) {
	f.Add([]byte(Header))
	f.Add(append([]byte(Header), 0x00, 0x05, 0x04, 'n', 'a', 'm', 'e'))
	f.Add(append([]byte(Header), 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b))
	f.Fuzz(func(t *testing.T, module []byte) {
		sections, err := Parse(module)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		again, err := Parse(Encode(sections, len(module)))
		if err != nil {
			t.Fatalf("re-encoded module does not parse: %v", err)
		}
		if len(again) != len(sections) {
			t.Fatalf("%d sections after re-encoding, want %d", len(again), len(sections))
		}
		for i := range again {
			if again[i].ID != sections[i].ID || !bytes.Equal(again[i].Payload, sections[i].Payload) {
				t.Fatalf("section %d differs after re-encoding", i)
			}
		}
		for _, s := range sections {
			if s.ID == SectionCustom {
				_, _, _ = SplitCustom(s)
			}
		}
	})
}

// FuzzSetCustomSection: replacing a custom section of any accepted module
// leaves one that parses and holds the new payload.
func FuzzSetCustomSection(f *testing.F) {
	f.Add([]byte(Header), []byte("payload"))
	f.Add(append([]byte(Header), 0x00, 0x06, 0x05, 'n', 'r', 'i', 'w', 'x'), []byte{})
	f.Fuzz(func(t *testing.T, module, payload []byte) {
		out, err := SetCustomSection(module, "nriwasm.fuzz", payload)
		if err != nil {
			return
		}
		got, ok, err := CustomSection(out, "nriwasm.fuzz")
		if err != nil || !ok || !bytes.Equal(got, payload) {
			t.Fatalf("CustomSection after SetCustomSection = %q, %v, %v; want %q", got, ok, err, payload)
		}
	})
}
