package interrupt

import (
	"fmt"
	"math"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// appendCheck appends the interrupt check that follows every loop header:
//
//	global.get $flag
//	if (empty)
//	  unreachable
//	end
func appendCheck(dst []byte, flag uint32) []byte {
	dst = append(dst, opGlobalGet)
	dst = wasmbin.AppendU32(dst, flag)
	return append(dst, opIf, blockTypeEmpty, 0x00, opEnd)
}

// rewriteCode returns the code section payload with the check inserted after
// every loop header, and the number of loops instrumented. firstFunc is the
// function index of the first body (the number of imported functions).
func rewriteCode(s wasmbin.Section, flag, firstFunc uint32) ([]byte, int, error) {
	r := s.Reader()
	n, err := r.U32()
	if err != nil {
		return nil, 0, fmt.Errorf("function body count: %w", err)
	}
	check := appendCheck(nil, flag)
	out := make([]byte, 0, len(s.Payload)+len(s.Payload)/8)
	out = wasmbin.AppendU32(out, n)
	var body []byte // reused buffer for one rewritten body
	loops := 0
	for i := uint32(0); i < n; i++ {
		fn := uint64(firstFunc) + uint64(i)
		size, err := r.U32()
		if err != nil {
			return nil, 0, fmt.Errorf("size of function %d: %w", fn, err)
		}
		base := r.Offset()
		src, err := r.Bytes(int(size))
		if err != nil {
			return nil, 0, fmt.Errorf("body of function %d: %w", fn, err)
		}
		var k int
		body, k, err = rewriteBody(body[:0], src, base, check)
		if err != nil {
			return nil, 0, fmt.Errorf("%w in function %d", err, fn)
		}
		if len(body) > math.MaxUint32 {
			return nil, 0, fmt.Errorf("function %d: rewritten body too large", fn)
		}
		loops += k
		out = wasmbin.AppendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if r.Remaining() != 0 {
		return nil, 0, fmt.Errorf("code section: %d trailing bytes at offset %d: %w", r.Remaining(), r.Offset(), wasmbin.ErrMalformed)
	}
	if len(out) > math.MaxUint32 {
		return nil, 0, fmt.Errorf("rewritten code section too large")
	}
	return out, loops, nil
}

// rewriteBody appends to dst the function body src, which starts at module
// offset base, with check inserted after each loop's blocktype. It returns
// the extended dst and the number of loops found.
func rewriteBody(dst, src []byte, base int, check []byte) ([]byte, int, error) {
	r := wasmbin.NewReader(src, base)
	decls, err := r.U32()
	if err != nil {
		return nil, 0, fmt.Errorf("locals: %w", err)
	}
	for j := uint32(0); j < decls; j++ {
		if _, err := r.U32(); err != nil {
			return nil, 0, fmt.Errorf("locals entry %d: %w", j, err)
		}
		if err := skipValType(r); err != nil {
			return nil, 0, fmt.Errorf("locals entry %d: %w", j, err)
		}
	}
	copied := 0 // src[:copied] is already in dst
	loops := 0
	last := byte(0xff)
	for r.Remaining() > 0 {
		op, err := skipInstruction(r)
		if err != nil {
			return nil, 0, err
		}
		last = op
		if op == opLoop {
			pos := len(src) - r.Remaining()
			dst = append(dst, src[copied:pos]...)
			dst = append(dst, check...)
			copied = pos
			loops++
		}
	}
	if last != opEnd {
		return nil, 0, fmt.Errorf("body does not end with an end instruction at offset %d: %w", r.Offset(), wasmbin.ErrMalformed)
	}
	return append(dst, src[copied:]...), loops, nil
}
