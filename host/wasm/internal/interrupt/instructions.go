package interrupt

import (
	"errors"
	"fmt"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// errUnsupported reports an opcode the decoder does not know, so it cannot
// tell where the next instruction starts.
var errUnsupported = errors.New("unsupported opcode")

// Value type bytes that introduce a reference type with an explicit heap
// type (function references proposal): (ref null ht) and (ref ht).
const (
	refNullPrefix byte = 0x63
	refPrefix     byte = 0x64
)

// skipInstruction decodes the instruction at r, consumes it with all its
// immediates and returns its first opcode byte.
func skipInstruction(r *wasmbin.Reader) (byte, error) {
	at := r.Offset()
	op, err := r.Byte()
	if err != nil {
		return 0, err
	}
	var imm immediate
	switch op {
	case opPrefixFC, opPrefixFD, opPrefixFE:
		sub, err := r.U32()
		if err != nil {
			return 0, fmt.Errorf("sub-opcode of 0x%02x: %w", op, err)
		}
		switch op {
		case opPrefixFC:
			imm = prefixFC(sub)
		case opPrefixFD:
			imm = prefixFD(sub)
		default:
			imm = prefixFE(sub)
		}
		if imm == immInvalid {
			return 0, fmt.Errorf("%w 0x%02x 0x%02x at offset %d", errUnsupported, op, sub, at)
		}
	default:
		imm = singleByteOps[op]
		if imm == immInvalid {
			return 0, fmt.Errorf("%w 0x%02x at offset %d", errUnsupported, op, at)
		}
	}
	if err := skipImmediate(r, imm); err != nil {
		return 0, fmt.Errorf("opcode 0x%02x at offset %d: %w", op, at, err)
	}
	return op, nil
}

// skipImmediate consumes the immediates described by imm.
func skipImmediate(r *wasmbin.Reader, imm immediate) error {
	var err error
	switch imm {
	case immNone:
	case immU32:
		_, err = r.U32()
	case immU32x2:
		if _, err = r.U32(); err == nil {
			_, err = r.U32()
		}
	case immBlockType:
		err = skipBlockType(r)
	case immBrTable:
		err = skipBrTable(r)
	case immMemArg:
		err = skipMemArg(r)
	case immMemArgLane:
		if err = skipMemArg(r); err == nil {
			_, err = r.Byte()
		}
	case immLane:
		_, err = r.Byte()
	case immV128:
		err = r.Skip(16)
	case immS32:
		_, err = r.S32()
	case immS64:
		_, err = r.S64()
	case immF32:
		err = r.Skip(4)
	case immF64:
		err = r.Skip(8)
	case immHeapType:
		err = skipHeapType(r)
	case immSelectT:
		_, err = skipValTypes(r)
	case immTryTable:
		err = skipTryTable(r)
	case immZeroByte:
		var b byte
		if b, err = r.Byte(); err == nil && b != 0 {
			err = fmt.Errorf("reserved byte is 0x%02x, want 0x00: %w", b, wasmbin.ErrMalformed)
		}
	default:
		panic(fmt.Sprintf("interrupt: unhandled immediate kind %d", imm))
	}
	return err
}

// skipHeapType consumes a heap type: an abstract type in one byte (a
// negative s33) or a type index (a non-negative s33).
func skipHeapType(r *wasmbin.Reader) error {
	at := r.Offset()
	v, err := r.S33()
	if err != nil {
		return err
	}
	if v < 0 && r.Offset()-at != 1 {
		return fmt.Errorf("heap type at offset %d: abstract heap types are one byte: %w", at, wasmbin.ErrMalformed)
	}
	return nil
}

// skipValType consumes a value type: one byte, or a reference type prefix
// followed by a heap type.
func skipValType(r *wasmbin.Reader) error {
	at := r.Offset()
	b, err := r.Byte()
	if err != nil {
		return err
	}
	switch {
	case b == refNullPrefix || b == refPrefix:
		return skipHeapType(r)
	case b > blockTypeEmpty && b < 0x80:
		return nil
	}
	return fmt.Errorf("invalid value type 0x%02x at offset %d: %w", b, at, wasmbin.ErrMalformed)
}

// skipBlockType consumes a blocktype: 0x40 (empty), a value type, or a type
// index encoded as a non-negative s33.
func skipBlockType(r *wasmbin.Reader) error {
	b, err := r.Peek()
	if err != nil {
		return err
	}
	switch {
	case b == blockTypeEmpty:
		return r.Skip(1)
	case b > blockTypeEmpty && b < 0x80:
		return skipValType(r)
	}
	at := r.Offset()
	v, err := r.S33()
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("block type at offset %d: negative type index %d: %w", at, v, wasmbin.ErrMalformed)
	}
	return nil
}

// skipBrTable consumes the label vector and default label of br_table.
func skipBrTable(r *wasmbin.Reader) error {
	n, err := r.U32()
	if err != nil {
		return err
	}
	for i := uint64(0); i <= uint64(n); i++ { // n labels and the default
		if _, err := r.U32(); err != nil {
			return err
		}
	}
	return nil
}

// skipMemArg consumes a memarg: alignment, a memory index when bit 6 of the
// alignment is set (multi-memory), and an offset (u64 for memory64).
func skipMemArg(r *wasmbin.Reader) error {
	align, err := r.U32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 {
		if _, err := r.U32(); err != nil {
			return err
		}
	}
	_, err = r.U64()
	return err
}

// skipTryTable consumes the blocktype and catch clauses of try_table.
func skipTryTable(r *wasmbin.Reader) error {
	if err := skipBlockType(r); err != nil {
		return err
	}
	n, err := r.U32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		at := r.Offset()
		kind, err := r.Byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0x00, 0x01: // catch, catch_ref: tag index, label
			_, err = r.U32()
			if err == nil {
				_, err = r.U32()
			}
		case 0x02, 0x03: // catch_all, catch_all_ref: label
			_, err = r.U32()
		default:
			err = fmt.Errorf("unknown catch kind 0x%02x at offset %d: %w", kind, at, wasmbin.ErrMalformed)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
