package interrupt

import (
	"fmt"
	"math"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// Opcodes of the check.
const (
	opI32Const  byte = 0x41
	opI32LeS    byte = 0x4c
	opI32Sub    byte = 0x6b
	opGlobalSet byte = 0x24
)

// appendCheck appends the check that follows every loop header:
//
//	global.get $countdown
//	i32.const 1
//	i32.sub
//	global.set $countdown
//	global.get $countdown
//	i32.const 0
//	i32.le_s
//	if (empty)
//	  call $poll
//	end
//
// The host's timer may zero the countdown between any two of these
// instructions. Each value read is used once, and the test is signed, so no
// interleaving lets the countdown wrap: a zero written before the decrement's
// read becomes -1 and is polled at once; one written between that read and
// the store is overwritten by a value below Countdown, so the guest still
// polls (and the host then fails the call) within Countdown iterations; one
// written after the store is read by the test or by the next iteration.
// Whatever the timing, a call runs at most Countdown+1 loop iterations past
// its deadline.
//
// It leaves the operand stack as it found it, so it fits any loop type.
func appendCheck(dst []byte, countdown, poll uint32) []byte {
	dst = append(dst, opGlobalGet)
	dst = wasmbin.AppendU32(dst, countdown)
	dst = append(dst, opI32Const, 0x01, opI32Sub, opGlobalSet)
	dst = wasmbin.AppendU32(dst, countdown)
	dst = append(dst, opGlobalGet)
	dst = wasmbin.AppendU32(dst, countdown)
	dst = append(dst, opI32Const, 0x00, opI32LeS, opIf, blockTypeEmpty, opCall)
	dst = wasmbin.AppendU32(dst, poll)
	return append(dst, opEnd)
}

// rewriteCode returns the code section payload with check inserted after
// every loop header and function indices >= poll incremented, and the number
// of loops instrumented. poll is the index of the poll import, which is also
// the index the first body had before the rewrite.
func rewriteCode(s wasmbin.Section, check []byte, poll uint32) ([]byte, int, error) {
	r := s.Reader()
	n, err := r.U32()
	if err != nil {
		return nil, 0, fmt.Errorf("function body count: %w", err)
	}
	out := make([]byte, 0, len(s.Payload)+len(s.Payload)/8)
	out = wasmbin.AppendU32(out, n)
	loops := 0
	for i := uint32(0); i < n; i++ {
		fn := uint64(poll) + uint64(i)
		size, err := r.U32()
		if err != nil {
			return nil, 0, fmt.Errorf("size of function %d: %w", fn, err)
		}
		base := r.Offset()
		src, err := r.Bytes(int(size))
		if err != nil {
			return nil, 0, fmt.Errorf("body of function %d: %w", fn, err)
		}
		body, k, err := rewriteBody(src, base, check, poll)
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

// rewriteBody returns the function body src, which starts at module offset
// base, rewritten, and the number of loops found.
func rewriteBody(src []byte, base int, check []byte, poll uint32) ([]byte, int, error) {
	e := newEditor(src, base, poll)
	r := e.reader()
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
	loops, err := e.instructions(r, check, false)
	if err != nil {
		return nil, 0, err
	}
	return e.finish(), loops, nil
}
