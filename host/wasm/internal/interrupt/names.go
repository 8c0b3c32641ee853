package interrupt

import (
	"fmt"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// Subsections of the "name" custom section keyed by function index.
const (
	nameFunctions byte = 1 // namemap: function index → name
	nameLocals    byte = 2 // indirect namemap: function index → local index → name
	nameLabels    byte = 3 // indirect namemap: function index → label index → name
)

// renumberNames returns the "name" section s with function indices >= first
// incremented; data is its payload after the section name. Other
// subsections are copied verbatim.
func renumberNames(s wasmbin.Section, data []byte, first uint32) (wasmbin.Section, error) {
	base := s.Offset + len(s.Payload) - len(data)
	out := append(make([]byte, 0, len(s.Payload)+16), s.Payload[:len(s.Payload)-len(data)]...)
	r := wasmbin.NewReader(data, base)
	for r.Remaining() > 0 {
		id, _ := r.Byte()
		size, err := r.U32()
		if err != nil {
			return s, fmt.Errorf("name subsection %d: %w", id, err)
		}
		at := r.Offset()
		sub, err := r.Bytes(int(size))
		if err != nil {
			return s, fmt.Errorf("name subsection %d: %w", id, err)
		}
		if id == nameFunctions || id == nameLocals || id == nameLabels {
			if sub, err = renumberNameMap(sub, at, first, id != nameFunctions); err != nil {
				return s, fmt.Errorf("name subsection %d: %w", id, err)
			}
		}
		out = append(out, id)
		out = wasmbin.AppendU32(out, uint32(len(sub)))
		out = append(out, sub...)
	}
	s.Payload = out
	return s, nil
}

// renumberNameMap renumbers the function indices keying a name map, or an
// indirect name map if indirect.
func renumberNameMap(sub []byte, base int, first uint32, indirect bool) ([]byte, error) {
	e := newEditor(sub, base, first)
	r := e.reader()
	name := func(uint32) error {
		if _, err := r.U32(); err != nil {
			return err
		}
		_, err := r.Name()
		return err
	}
	err := vector(r, "name", func(uint32) error {
		if err := e.funcIdx(r); err != nil {
			return err
		}
		if indirect {
			return vector(r, "inner name", name)
		}
		_, err := r.Name()
		return err
	})
	if err == nil && r.Remaining() != 0 {
		err = fmt.Errorf("%d trailing bytes at offset %d: %w", r.Remaining(), r.Offset(), wasmbin.ErrMalformed)
	}
	if err != nil {
		return nil, err
	}
	return e.finish(), nil
}
