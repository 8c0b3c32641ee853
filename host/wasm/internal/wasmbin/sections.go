package wasmbin

import "fmt"

// sectionRank gives the position a non-custom section must take in a module;
// ids missing from the table are unknown.
var sectionRank = map[byte]int{
	SectionType: 1, SectionImport: 2, SectionFunction: 3, SectionTable: 4,
	SectionMemory: 5, SectionTag: 6, SectionGlobal: 7, SectionExport: 8,
	SectionStart: 9, SectionElement: 10, SectionDataCount: 11, SectionCode: 12,
	SectionData: 13,
}

// Section is one section of a module.
type Section struct {
	// ID is the section id, one of the Section* constants.
	ID byte
	// Payload is the section content, after the id and size. For a custom
	// section it starts with the section name.
	Payload []byte
	// Offset is the absolute module offset of Payload[0]; for a section
	// that was not parsed from a module, any value used in error messages.
	Offset int
}

// Reader returns a Reader over the section's payload.
func (s Section) Reader() *Reader { return NewReader(s.Payload, s.Offset) }

// end returns the module offset just past the section.
func (s Section) end() int { return s.Offset + len(s.Payload) }

// Parse splits module into its sections, checking the header, the section
// sizes and the order of the non-custom sections (which also rules out
// duplicates). Payloads are sub-slices of module.
func Parse(module []byte) ([]Section, error) {
	if len(module) < len(Header) {
		return nil, fmt.Errorf("header: %w", ErrTruncated)
	}
	if string(module[:4]) != Header[:4] {
		return nil, fmt.Errorf("header: bad magic number % x: %w", module[:4], ErrMalformed)
	}
	if string(module[4:8]) != Header[4:8] {
		return nil, fmt.Errorf("header: unsupported version % x (only core module version 1): %w", module[4:8], ErrMalformed)
	}
	r := &Reader{buf: module, pos: len(Header)}
	var sections []Section
	lastRank := 0
	for r.Remaining() > 0 {
		start := r.Offset()
		id, _ := r.Byte()
		size, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("size of section %d at offset %d: %w", id, start, err)
		}
		payloadOffset := r.Offset()
		payload, err := r.Bytes(int(size))
		if err != nil {
			return nil, fmt.Errorf("section %d at offset %d: %w", id, start, err)
		}
		if id != SectionCustom {
			rank, ok := sectionRank[id]
			if !ok {
				return nil, fmt.Errorf("unknown section id %d at offset %d: %w", id, start, ErrMalformed)
			}
			if rank <= lastRank {
				return nil, fmt.Errorf("section %d at offset %d is duplicated or out of order: %w", id, start, ErrMalformed)
			}
			lastRank = rank
		}
		sections = append(sections, Section{ID: id, Payload: payload, Offset: payloadOffset})
	}
	return sections, nil
}

// Insert adds s to sections at the position its id requires: before the
// first non-custom section that must follow it, or else right after the last
// non-custom section (so trailing custom sections stay last). It may reuse
// the backing array of sections, like append.
func Insert(sections []Section, s Section) []Section {
	rank := sectionRank[s.ID]
	at := -1
	for i, cur := range sections {
		if cur.ID == SectionCustom {
			continue
		}
		if sectionRank[cur.ID] > rank {
			at = i
			break
		}
		at = i + 1
	}
	if at < 0 {
		at = 0
	}
	sections = append(sections, Section{})
	copy(sections[at+1:], sections[at:])
	sections[at] = s
	return sections
}

// Encode serialises the header and sections into a new module. sizeHint is
// the capacity to allocate; the result grows past it if needed. Payloads
// must be shorter than 4 GiB.
func Encode(sections []Section, sizeHint int) []byte {
	out := make([]byte, 0, sizeHint)
	out = append(out, Header...)
	for _, s := range sections {
		out = appendSection(out, s.ID, s.Payload)
	}
	return out
}

// appendSection appends a section with the given id and payload to dst.
func appendSection(dst []byte, id byte, payload ...[]byte) []byte {
	size := 0
	for _, p := range payload {
		size += len(p)
	}
	dst = append(dst, id)
	dst = AppendU32(dst, uint32(size))
	for _, p := range payload {
		dst = append(dst, p...)
	}
	return dst
}
