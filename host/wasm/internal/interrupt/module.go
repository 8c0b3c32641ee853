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

// importCounts holds the sizes of the imported parts of the index spaces the
// rewrite needs.
type importCounts struct {
	funcs   uint32
	globals uint32
}

// countImports parses the import section and counts imported functions and
// globals.
func countImports(s wasmbin.Section) (importCounts, error) {
	var c importCounts
	r := s.Reader()
	n, err := r.U32()
	if err != nil {
		return c, fmt.Errorf("import count: %w", err)
	}
	for i := uint32(0); i < n; i++ {
		kind, err := skipImport(r)
		if err != nil {
			return c, fmt.Errorf("import %d: %w", i, err)
		}
		switch kind {
		case kindFunc:
			c.funcs++
		case kindGlobal:
			c.globals++
		}
	}
	if r.Remaining() != 0 {
		return c, fmt.Errorf("import section: %d trailing bytes: %w", r.Remaining(), wasmbin.ErrMalformed)
	}
	return c, nil
}

// skipImport reads one import entry and returns its kind.
func skipImport(r *wasmbin.Reader) (byte, error) {
	if _, err := r.Name(); err != nil {
		return 0, fmt.Errorf("module name: %w", err)
	}
	if _, err := r.Name(); err != nil {
		return 0, fmt.Errorf("field name: %w", err)
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

// appendGlobal returns the global section payload with the interrupt flag
// appended (nil payload: a new section), and the flag's index.
func appendGlobal(payload []byte, offset int, imported uint32) ([]byte, uint32, error) {
	var defined uint32
	var rest []byte
	if payload != nil {
		r := wasmbin.NewReader(payload, offset)
		n, err := r.U32()
		if err != nil {
			return nil, 0, fmt.Errorf("global count: %w", err)
		}
		defined, rest = n, payload[len(payload)-r.Remaining():]
	}
	if defined == math.MaxUint32 || uint64(imported)+uint64(defined) >= math.MaxUint32 {
		return nil, 0, fmt.Errorf("too many globals: %w", wasmbin.ErrMalformed)
	}
	out := wasmbin.AppendU32(make([]byte, 0, len(payload)+10), defined+1)
	out = append(out, rest...)
	// i32, mutable, init expression: i32.const 0; end.
	out = append(out, 0x7f, 0x01, 0x41, 0x00, 0x0b)
	return out, imported + defined, nil
}

// appendExport returns the export section payload (nil payload: a new
// section) with an export of global index idx under GlobalName. It fails if
// the name is already exported.
func appendExport(payload []byte, offset int, idx uint32) ([]byte, error) {
	var count uint32
	var rest []byte
	if payload != nil {
		r := wasmbin.NewReader(payload, offset)
		n, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("export count: %w", err)
		}
		count, rest = n, payload[len(payload)-r.Remaining():]
		for i := uint32(0); i < n; i++ {
			name, err := r.Name()
			if err != nil {
				return nil, fmt.Errorf("export %d: %w", i, err)
			}
			if name == GlobalName {
				return nil, fmt.Errorf("export %q: %w (module already instrumented?)", name, errExportExists)
			}
			if _, err := r.Byte(); err != nil { // kind
				return nil, fmt.Errorf("export %d: %w", i, err)
			}
			if _, err := r.U32(); err != nil { // index
				return nil, fmt.Errorf("export %d: %w", i, err)
			}
		}
		if r.Remaining() != 0 {
			return nil, fmt.Errorf("export section: %d trailing bytes: %w", r.Remaining(), wasmbin.ErrMalformed)
		}
	}
	if count == math.MaxUint32 {
		return nil, fmt.Errorf("too many exports: %w", wasmbin.ErrMalformed)
	}
	out := wasmbin.AppendU32(make([]byte, 0, len(payload)+len(GlobalName)+12), count+1)
	out = append(out, rest...)
	out = wasmbin.AppendName(out, GlobalName)
	out = append(out, kindGlobal)
	return wasmbin.AppendU32(out, idx), nil
}
