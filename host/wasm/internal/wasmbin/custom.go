package wasmbin

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// SplitCustom returns the name of a custom section and its payload after
// the name.
func SplitCustom(s Section) (string, []byte, error) {
	r := s.Reader()
	name, err := r.Name()
	if err != nil {
		return "", nil, fmt.Errorf("custom section name: %w", err)
	}
	return name, s.Payload[len(s.Payload)-r.Remaining():], nil
}

// CustomName returns the name of a custom section.
func CustomName(s Section) (string, error) {
	name, _, err := SplitCustom(s)
	return name, err
}

// CustomSection returns the payload, after the name, of the first custom
// section of module called name; ok is false if there is none. The payload
// is a sub-slice of module. It fails if module is malformed, including a
// custom section before the match whose name cannot be read.
func CustomSection(module []byte, name string) (payload []byte, ok bool, err error) {
	sections, err := Parse(module)
	if err != nil {
		return nil, false, fmt.Errorf("reading custom section %q: %w", name, err)
	}
	for _, s := range sections {
		if s.ID != SectionCustom {
			continue
		}
		n, data, err := SplitCustom(s)
		if err != nil {
			return nil, false, fmt.Errorf("reading custom section %q: %w", name, err)
		}
		if n == name {
			return data, true, nil
		}
	}
	return nil, false, nil
}

// SetCustomSection returns a copy of module without any custom section
// called name and with one such section, holding payload after the name,
// appended at the end. The other sections are copied byte for byte, in
// order. It fails if module is malformed or name is not valid UTF-8.
func SetCustomSection(module []byte, name string, payload []byte) ([]byte, error) {
	if !utf8.ValidString(name) {
		return nil, fmt.Errorf("setting custom section %q: name is not valid UTF-8", name)
	}
	if uint64(len(name))+uint64(len(payload))+5 > math.MaxUint32 {
		return nil, fmt.Errorf("setting custom section %q: %d-byte payload too large", name, len(payload))
	}
	sections, err := Parse(module)
	if err != nil {
		return nil, fmt.Errorf("setting custom section %q: %w", name, err)
	}
	out := make([]byte, 0, len(module)+len(name)+len(payload)+11)
	out = append(out, Header...)
	start := len(Header) // module offset of the current section's id
	for _, s := range sections {
		raw := module[start:s.end()]
		start = s.end()
		if s.ID == SectionCustom {
			n, _, err := SplitCustom(s)
			if err != nil {
				return nil, fmt.Errorf("setting custom section %q: %w", name, err)
			}
			if n == name {
				continue
			}
		}
		out = append(out, raw...)
	}
	return appendSection(out, SectionCustom, AppendName(nil, name), payload), nil
}
