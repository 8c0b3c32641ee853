package interrupt

import (
	"fmt"
	"math"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// Opcodes that take a function index.
const (
	opCall       byte = 0x10
	opReturnCall byte = 0x12
	opRefFunc    byte = 0xd2
)

// editor copies a payload src into out while the caller decodes it with a
// Reader over src, replacing function indices and inserting code on the way.
// Only edited spans are copied eagerly; the rest follows in finish.
type editor struct {
	src    []byte
	base   int    // module offset of src[0]
	copied int    // src[:copied] is already in out
	out    []byte // nil until the first edit
	first  uint32 // function indices >= first are incremented
}

func newEditor(src []byte, base int, first uint32) *editor {
	return &editor{src: src, base: base, first: first}
}

func (e *editor) reader() *wasmbin.Reader { return wasmbin.NewReader(e.src, e.base) }

// flush copies src up to module offset at into out.
func (e *editor) flush(at int) {
	if e.out == nil {
		e.out = make([]byte, 0, len(e.src)+len(e.src)/8+16)
	}
	e.out = append(e.out, e.src[e.copied:at-e.base]...)
	e.copied = at - e.base
}

// insert adds b at the current position of r.
func (e *editor) insert(r *wasmbin.Reader, b []byte) {
	e.flush(r.Offset())
	e.out = append(e.out, b...)
}

// funcIdx reads a function index at r and renumbers it.
func (e *editor) funcIdx(r *wasmbin.Reader) error {
	at := r.Offset()
	idx, err := r.U32()
	if err != nil {
		return err
	}
	if idx < e.first {
		return nil
	}
	if idx == math.MaxUint32 {
		return fmt.Errorf("function index %d at offset %d: %w", idx, at, wasmbin.ErrMalformed)
	}
	e.flush(at)
	e.out = wasmbin.AppendU32(e.out, idx+1)
	e.copied = r.Offset() - e.base
	return nil
}

// finish returns the edited payload: src itself if nothing changed.
func (e *editor) finish() []byte {
	if e.out == nil {
		return e.src
	}
	return append(e.out, e.src[e.copied:]...)
}

// instructions decodes instructions at r, renumbering function indices and
// inserting check after every loop header. A constant expression (expr)
// stops after its first end; a function body runs to the end of r and must
// end with end. It returns the number of loops.
func (e *editor) instructions(r *wasmbin.Reader, check []byte, expr bool) (int, error) {
	loops := 0
	last := byte(0xff)
	for r.Remaining() > 0 {
		op, err := r.Peek()
		if err != nil {
			return 0, err
		}
		switch op {
		case opCall, opReturnCall, opRefFunc:
			_, _ = r.Byte()
			if err := e.funcIdx(r); err != nil {
				return 0, fmt.Errorf("opcode 0x%02x: %w", op, err)
			}
		default:
			if op, err = skipInstruction(r); err != nil {
				return 0, err
			}
		}
		last = op
		if op == opLoop && check != nil {
			e.insert(r, check)
			loops++
		}
		if expr && op == opEnd {
			return loops, nil
		}
	}
	if last != opEnd {
		return 0, fmt.Errorf("missing end instruction at offset %d: %w", r.Offset(), wasmbin.ErrMalformed)
	}
	return loops, nil
}

// expr renumbers the constant expression at r.
func (e *editor) expr(r *wasmbin.Reader) error {
	_, err := e.instructions(r, nil, true)
	return err
}
