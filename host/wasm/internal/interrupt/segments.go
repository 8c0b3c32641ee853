package interrupt

import (
	"fmt"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// vector runs item for each element of a vector at r.
func vector(r *wasmbin.Reader, what string, item func(i uint32) error) error {
	n, err := r.U32()
	if err != nil {
		return fmt.Errorf("%s count: %w", what, err)
	}
	for i := uint32(0); i < n; i++ {
		if err := item(i); err != nil {
			return fmt.Errorf("%s %d: %w", what, i, err)
		}
	}
	return nil
}

// renumberSection returns the payload of s with function indices renumbered,
// for the sections other than code, export and custom that hold them.
func renumberSection(s wasmbin.Section, first uint32) ([]byte, error) {
	if s.Payload == nil {
		return nil, nil
	}
	e := newEditor(s.Payload, s.Offset, first)
	r := e.reader()
	var err error
	switch s.ID {
	case wasmbin.SectionStart:
		err = e.funcIdx(r)
	case wasmbin.SectionTable:
		err = vector(r, "table", func(uint32) error { return e.table(r) })
	case wasmbin.SectionGlobal:
		err = vector(r, "global", func(uint32) error {
			if err := skipValType(r); err != nil {
				return err
			}
			if _, err := r.Byte(); err != nil { // mutability
				return err
			}
			return e.expr(r)
		})
	case wasmbin.SectionElement:
		err = vector(r, "element segment", func(uint32) error { return e.element(r) })
	case wasmbin.SectionData:
		err = vector(r, "data segment", func(uint32) error { return e.data(r) })
	default:
		return s.Payload, nil
	}
	if err == nil && r.Remaining() != 0 {
		err = fmt.Errorf("%d trailing bytes at offset %d: %w", r.Remaining(), r.Offset(), wasmbin.ErrMalformed)
	}
	if err != nil {
		return nil, err
	}
	return e.finish(), nil
}

// table reads a table: a table type, or 0x40 0x00, a table type and an
// initializer expression (function references proposal).
func (e *editor) table(r *wasmbin.Reader) error {
	b, err := r.Peek()
	if err != nil {
		return err
	}
	init := b == 0x40
	if init {
		if err := r.Skip(2); err != nil {
			return err
		}
	}
	if err := skipValType(r); err != nil {
		return err
	}
	if err := skipLimits(r); err != nil {
		return err
	}
	if init {
		return e.expr(r)
	}
	return nil
}

// element reads an element segment. Bit 0 of its flags: passive or
// declarative (else active); bit 1: explicit table index (active) or
// declarative (else passive); bit 2: expressions instead of function indices.
func (e *editor) element(r *wasmbin.Reader) error {
	at := r.Offset()
	flags, err := r.U32()
	if err != nil {
		return err
	}
	if flags > 7 {
		return fmt.Errorf("unknown element segment flags %d at offset %d: %w", flags, at, wasmbin.ErrMalformed)
	}
	active := flags&1 == 0
	if active && flags&2 != 0 {
		if _, err := r.U32(); err != nil { // table index
			return err
		}
	}
	if active {
		if err := e.expr(r); err != nil {
			return err
		}
	}
	exprs := flags&4 != 0
	if flags != 0 && flags != 4 { // element kind or reference type
		if exprs {
			err = skipValType(r)
		} else {
			_, err = r.Byte()
		}
		if err != nil {
			return err
		}
	}
	return vector(r, "element", func(uint32) error {
		if exprs {
			return e.expr(r)
		}
		return e.funcIdx(r)
	})
}

// data reads a data segment: flags 0 (offset, bytes), 1 (bytes) or 2
// (memory index, offset, bytes).
func (e *editor) data(r *wasmbin.Reader) error {
	at := r.Offset()
	flags, err := r.U32()
	if err != nil {
		return err
	}
	switch flags {
	case 2:
		if _, err := r.U32(); err != nil {
			return err
		}
		fallthrough
	case 0:
		if err := e.expr(r); err != nil {
			return err
		}
	case 1:
	default:
		return fmt.Errorf("unknown data segment flags %d at offset %d: %w", flags, at, wasmbin.ErrMalformed)
	}
	n, err := r.U32()
	if err != nil {
		return err
	}
	return r.Skip(int(n))
}
