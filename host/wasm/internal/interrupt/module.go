package interrupt

import (
	"errors"
	"fmt"
	"math"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// Import and export kinds.
const (
	kindFunc   byte = 0
	kindTable  byte = 1
	kindMemory byte = 2
	kindGlobal byte = 3
	kindTag    byte = 4
)

// errExportExists reports a module that already exports GlobalName, for
// instance one that was already instrumented.
var errExportExists = errors.New("export already exists")

// errImportExists reports a module that already imports the poll function.
var errImportExists = errors.New("import already exists")

// importCounts holds the sizes of the imported parts of the index spaces the
// rewrite needs.
type importCounts struct {
	funcs   uint32
	globals uint32
}

// countImports parses the import section and counts imported functions and
// globals. It fails if the module already imports PollModule.PollName.
func countImports(s wasmbin.Section) (importCounts, error) {
	var c importCounts
	r := s.Reader()
	err := vector(r, "import", func(uint32) error {
		kind, err := skipImport(r)
		switch kind {
		case kindFunc:
			c.funcs++
		case kindGlobal:
			c.globals++
		}
		return err
	})
	if err == nil && r.Remaining() != 0 {
		err = fmt.Errorf("import section: %d trailing bytes: %w", r.Remaining(), wasmbin.ErrMalformed)
	}
	return c, err
}

// skipImport reads one import entry and returns its kind.
func skipImport(r *wasmbin.Reader) (byte, error) {
	module, err := r.Name()
	if err != nil {
		return 0, fmt.Errorf("module name: %w", err)
	}
	field, err := r.Name()
	if err != nil {
		return 0, fmt.Errorf("field name: %w", err)
	}
	if module == PollModule && field == PollName {
		return 0, fmt.Errorf("%s.%s: %w (module already instrumented?)", module, field, errImportExists)
	}
	at := r.Offset()
	kind, err := r.Byte()
	if err != nil {
		return 0, err
	}
	switch kind {
	case kindFunc:
		_, err = r.U32()
	case kindTable:
		if err = skipValType(r); err == nil {
			err = skipLimits(r)
		}
	case kindMemory:
		err = skipLimits(r)
	case kindGlobal:
		if err = skipValType(r); err == nil {
			_, err = r.Byte() // mutability
		}
	case kindTag:
		if _, err = r.Byte(); err == nil { // attribute
			_, err = r.U32()
		}
	default:
		return 0, fmt.Errorf("unknown import kind 0x%02x at offset %d: %w", kind, at, wasmbin.ErrMalformed)
	}
	return kind, err
}

// skipLimits reads table or memory limits. The flag byte says whether a
// maximum follows (bit 0), whether the memory is shared (bit 1), whether the
// bounds are 64-bit (bit 2) and whether a custom page size follows (bit 3).
func skipLimits(r *wasmbin.Reader) error {
	at := r.Offset()
	flags, err := r.Byte()
	if err != nil {
		return err
	}
	if flags > 0x0f {
		return fmt.Errorf("unknown limits flags 0x%02x at offset %d: %w", flags, at, wasmbin.ErrMalformed)
	}
	wide := flags&0x04 != 0
	if err := skipBound(r, wide); err != nil {
		return err
	}
	if flags&0x01 != 0 {
		if err := skipBound(r, wide); err != nil {
			return err
		}
	}
	if flags&0x08 != 0 {
		if _, err := r.U32(); err != nil {
			return err
		}
	}
	return nil
}

// skipBound reads a limits bound: a u64 if wide, else a u32.
func skipBound(r *wasmbin.Reader, wide bool) error {
	var err error
	if wide {
		_, err = r.U64()
	} else {
		_, err = r.U32()
	}
	return err
}

// appendEntry returns the payload of a vector section (nil payload: a new
// section) with entry appended, and the index the entry takes among the
// section's entries.
func appendEntry(payload []byte, offset int, entry []byte) ([]byte, uint32, error) {
	var count uint32
	var rest []byte
	if payload != nil {
		r := wasmbin.NewReader(payload, offset)
		n, err := r.U32()
		if err != nil {
			return nil, 0, fmt.Errorf("entry count: %w", err)
		}
		count, rest = n, payload[len(payload)-r.Remaining():]
	}
	if count == math.MaxUint32 {
		return nil, 0, fmt.Errorf("too many entries: %w", wasmbin.ErrMalformed)
	}
	out := wasmbin.AppendU32(make([]byte, 0, len(payload)+len(entry)+5), count+1)
	out = append(out, rest...)
	return append(out, entry...), count, nil
}

// renumberExports returns the export section payload with function indices
// >= first incremented. It fails if GlobalName is already exported.
func renumberExports(s wasmbin.Section, first uint32) ([]byte, error) {
	if s.Payload == nil {
		return nil, nil
	}
	e := newEditor(s.Payload, s.Offset, first)
	r := e.reader()
	err := vector(r, "export", func(uint32) error {
		name, err := r.Name()
		if err != nil {
			return err
		}
		if name == GlobalName {
			return fmt.Errorf("%q: %w (module already instrumented?)", name, errExportExists)
		}
		kind, err := r.Byte()
		if err != nil {
			return err
		}
		if kind == kindFunc {
			return e.funcIdx(r)
		}
		_, err = r.U32()
		return err
	})
	if err == nil && r.Remaining() != 0 {
		err = fmt.Errorf("%d trailing bytes: %w", r.Remaining(), wasmbin.ErrMalformed)
	}
	if err != nil {
		return nil, err
	}
	return e.finish(), nil
}

// pollType returns the type section payload with a type () -> () appended
// unless one exists, and that type's index. It fails on the type forms of
// the GC proposal (recursive groups, subtypes, structs, arrays).
func pollType(s wasmbin.Section) ([]byte, uint32, error) {
	if s.Payload == nil {
		return appendEntry(nil, s.Offset, []byte{0x60, 0x00, 0x00})
	}
	r := s.Reader()
	found := int64(-1)
	err := vector(r, "type", func(i uint32) error {
		at := r.Offset()
		form, err := r.Byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			return fmt.Errorf("%w type form 0x%02x at offset %d", errUnsupported, form, at)
		}
		params, err := skipValTypes(r)
		if err != nil {
			return err
		}
		results, err := skipValTypes(r)
		if err == nil && params == 0 && results == 0 && found < 0 {
			found = int64(i)
		}
		return err
	})
	if err == nil && r.Remaining() != 0 {
		err = fmt.Errorf("%d trailing bytes: %w", r.Remaining(), wasmbin.ErrMalformed)
	}
	if err != nil {
		return nil, 0, err
	}
	if found >= 0 {
		return s.Payload, uint32(found), nil
	}
	return appendEntry(s.Payload, s.Offset, []byte{0x60, 0x00, 0x00})
}

// skipValTypes consumes a vector of value types and returns its length.
func skipValTypes(r *wasmbin.Reader) (uint32, error) {
	var n uint32
	err := vector(r, "value type", func(uint32) error {
		n++
		return skipValType(r)
	})
	return n, err
}
