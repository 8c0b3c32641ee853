package interrupt

import (
	"errors"
	"fmt"
	"strings"
)

// Section ids of the WebAssembly binary format.
const (
	secCustom    byte = 0
	secType      byte = 1
	secImport    byte = 2
	secFunction  byte = 3
	secTable     byte = 4
	secMemory    byte = 5
	secGlobal    byte = 6
	secExport    byte = 7
	secStart     byte = 8
	secElement   byte = 9
	secCode      byte = 10
	secData      byte = 11
	secDataCount byte = 12
	secTag       byte = 13
)

// header is the magic number followed by binary format version 1.
var header = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

// errMalformed reports a module that does not follow the binary format.
var errMalformed = errors.New("malformed module")

// sectionRank gives the position a non-custom section must take in a module;
// ids missing from the table are unknown.
var sectionRank = map[byte]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5,
	secTag: 6, secGlobal: 7, secExport: 8, secStart: 9, secElement: 10,
	secDataCount: 11, secCode: 12, secData: 13,
}

// section is one section of a module.
type section struct {
	id      byte
	payload []byte
	// offset is the absolute module offset of payload[0].
	offset int
}

// payloadReader returns a reader over the section's payload.
func (s section) payloadReader() *reader {
	return &reader{buf: s.payload, base: s.offset}
}

// parseSections splits module into its sections, checking the header, the
// section sizes and the order of the non-custom sections.
func parseSections(module []byte) ([]section, error) {
	if len(module) < len(header) {
		return nil, fmt.Errorf("header: %w", errTruncated)
	}
	if string(module[:4]) != string(header[:4]) {
		return nil, fmt.Errorf("header: bad magic number % x: %w", module[:4], errMalformed)
	}
	if string(module[4:8]) != string(header[4:8]) {
		return nil, fmt.Errorf("header: unsupported version % x (only core module version 1): %w", module[4:8], errMalformed)
	}
	r := &reader{buf: module, pos: len(header)}
	var sections []section
	lastRank := 0
	for r.remaining() > 0 {
		start := r.offset()
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("size of section %d at offset %d: %w", id, start, err)
		}
		payloadOffset := r.offset()
		payload, err := r.bytes(int(size))
		if err != nil {
			return nil, fmt.Errorf("section %d at offset %d: %w", id, start, err)
		}
		if id != secCustom {
			rank, ok := sectionRank[id]
			if !ok {
				return nil, fmt.Errorf("unknown section id %d at offset %d: %w", id, start, errMalformed)
			}
			if rank <= lastRank {
				return nil, fmt.Errorf("section %d at offset %d is duplicated or out of order: %w", id, start, errMalformed)
			}
			lastRank = rank
		}
		sections = append(sections, section{id: id, payload: payload, offset: payloadOffset})
	}
	return sections, nil
}

// customName returns the name of a custom section.
func customName(s section) (string, error) {
	name, err := s.payloadReader().name()
	if err != nil {
		return "", fmt.Errorf("custom section name: %w", err)
	}
	return name, nil
}

// isDebugSection reports whether s is a DWARF custom section, whose code
// offsets become wrong once function bodies are rewritten.
func isDebugSection(s section) (bool, error) {
	if s.id != secCustom {
		return false, nil
	}
	name, err := customName(s)
	if err != nil {
		return false, err
	}
	return strings.HasPrefix(name, ".debug_"), nil
}

// insertSection adds s to sections at the position its id requires: before
// the first non-custom section that must follow it, or else right after the
// last non-custom section (so trailing custom sections stay last).
func insertSection(sections []section, s section) []section {
	rank := sectionRank[s.id]
	at := -1
	for i, cur := range sections {
		if cur.id == secCustom {
			continue
		}
		if sectionRank[cur.id] > rank {
			at = i
			break
		}
		at = i + 1
	}
	if at < 0 {
		at = 0
	}
	sections = append(sections, section{})
	copy(sections[at+1:], sections[at:])
	sections[at] = s
	return sections
}

// encodeModule serialises the header and sections.
func encodeModule(sections []section, sizeHint int) []byte {
	out := make([]byte, 0, sizeHint)
	out = append(out, header...)
	for _, s := range sections {
		out = append(out, s.id)
		out = appendU32(out, uint32(len(s.payload)))
		out = append(out, s.payload...)
	}
	return out
}
