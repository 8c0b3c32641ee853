package interrupt

// immediate describes the immediate operands that follow an opcode.
type immediate uint8

const (
	immInvalid    immediate = iota // not a known opcode
	immNone                        // no immediates
	immU32                         // one u32: an index or a label
	immU32x2                       // two u32s
	immBlockType                   // blocktype
	immBrTable                     // vec(label) label
	immMemArg                      // memarg
	immMemArgLane                  // memarg, lane byte
	immLane                        // lane byte
	immV128                        // 16 bytes
	immS32                         // signed 32-bit LEB128
	immS64                         // signed 64-bit LEB128
	immF32                         // 4 bytes
	immF64                         // 8 bytes
	immHeapType                    // heaptype (s33)
	immSelectT                     // vec(valtype)
	immTryTable                    // blocktype vec(catch)
	immZeroByte                    // one reserved 0x00 byte
)

// Opcodes the decoder treats specially.
const (
	opLoop      byte = 0x03
	opEnd       byte = 0x0b
	opGlobalGet byte = 0x23
	opIf        byte = 0x04
	opPrefixFC  byte = 0xfc // bulk memory, saturating truncation, tables
	opPrefixFD  byte = 0xfd // SIMD
	opPrefixFE  byte = 0xfe // threads
)

// blockTypeEmpty is the blocktype of a block without params or results.
const blockTypeEmpty byte = 0x40

// singleByteOps gives the immediates of every opcode that is one byte long.
var singleByteOps = func() [256]immediate {
	var t [256]immediate
	set := func(imm immediate, ops ...byte) {
		for _, op := range ops {
			t[op] = imm
		}
	}
	setRange := func(imm immediate, from, to byte) {
		for op := int(from); op <= int(to); op++ {
			t[op] = imm
		}
	}
	// Control: unreachable nop else end return; legacy catch_all;
	// throw_ref; ref.is_null ref.eq ref.as_non_null.
	set(immNone, 0x00, 0x01, 0x05, 0x0b, 0x0f, 0x19, 0x0a, 0xd1, 0xd3, 0xd4)
	// block loop if; legacy try.
	set(immBlockType, 0x02, 0x03, 0x04, 0x06)
	// Legacy catch (tag), throw (tag), rethrow (label), br, br_if, call,
	// return_call, call_ref, return_call_ref (type), delegate (label),
	// br_on_null, br_on_non_null (label), ref.func.
	set(immU32, 0x07, 0x08, 0x09, 0x0c, 0x0d, 0x10, 0x12, 0x14, 0x15, 0x18, 0xd5, 0xd6, 0xd2)
	set(immBrTable, 0x0e)
	// call_indirect, return_call_indirect: type index, table index.
	set(immU32x2, 0x11, 0x13)
	set(immTryTable, 0x1f)
	// drop, select.
	set(immNone, 0x1a, 0x1b)
	set(immSelectT, 0x1c)
	// local.get/set/tee, global.get/set, table.get/set.
	setRange(immU32, 0x20, 0x26)
	// Loads and stores.
	setRange(immMemArg, 0x28, 0x3e)
	// memory.size, memory.grow: memory index.
	set(immU32, 0x3f, 0x40)
	set(immS32, 0x41)
	set(immS64, 0x42)
	set(immF32, 0x43)
	set(immF64, 0x44)
	// Numeric operators, including the sign-extension ones.
	setRange(immNone, 0x45, 0xc4)
	set(immHeapType, 0xd0)
	return t
}()

// prefixFCOps gives the immediates of the 0xFC-prefixed instructions, by
// sub-opcode.
var prefixFCOps = [...]immediate{
	0x00: immNone, 0x01: immNone, 0x02: immNone, 0x03: immNone, // i32.trunc_sat_*
	0x04: immNone, 0x05: immNone, 0x06: immNone, 0x07: immNone, // i64.trunc_sat_*
	0x08: immU32x2, // memory.init data, memory
	0x09: immU32,   // data.drop
	0x0a: immU32x2, // memory.copy memory, memory
	0x0b: immU32,   // memory.fill memory
	0x0c: immU32x2, // table.init elem, table
	0x0d: immU32,   // elem.drop
	0x0e: immU32x2, // table.copy table, table
	0x0f: immU32,   // table.grow
	0x10: immU32,   // table.size
	0x11: immU32,   // table.fill
}

// prefixFC returns the immediates of 0xFC sub-opcode sub.
func prefixFC(sub uint32) immediate {
	if sub < uint32(len(prefixFCOps)) {
		return prefixFCOps[sub]
	}
	return immInvalid
}

// simdGaps are the unassigned sub-opcodes in 0x00..0xFF of the SIMD prefix.
var simdGaps = map[uint32]bool{
	0x9a: true, 0xa2: true, 0xa5: true, 0xa6: true, 0xaf: true, 0xb0: true,
	0xb2: true, 0xb3: true, 0xb4: true, 0xbb: true, 0xc2: true, 0xc5: true,
	0xc6: true, 0xcf: true, 0xd0: true, 0xd2: true, 0xd3: true, 0xd4: true,
	0xe2: true, 0xee: true,
}

// prefixFD returns the immediates of 0xFD (SIMD) sub-opcode sub, including
// the relaxed SIMD operators 0x100..0x113.
func prefixFD(sub uint32) immediate {
	switch {
	case sub <= 0x0b: // v128.load*, v128.store
		return immMemArg
	case sub == 0x0c: // v128.const
		return immV128
	case sub == 0x0d: // i8x16.shuffle
		return immV128
	case sub >= 0x15 && sub <= 0x22: // extract_lane, replace_lane
		return immLane
	case sub >= 0x54 && sub <= 0x5b: // v128.load*_lane, v128.store*_lane
		return immMemArgLane
	case sub == 0x5c || sub == 0x5d: // v128.load32_zero, v128.load64_zero
		return immMemArg
	case sub <= 0xff && !simdGaps[sub]:
		return immNone
	case sub >= 0x100 && sub <= 0x113: // relaxed SIMD
		return immNone
	}
	return immInvalid
}

// prefixFE returns the immediates of 0xFE (threads) sub-opcode sub.
func prefixFE(sub uint32) immediate {
	switch {
	case sub <= 0x02: // memory.atomic.notify, memory.atomic.wait32/64
		return immMemArg
	case sub == 0x03: // atomic.fence
		return immZeroByte
	case sub >= 0x10 && sub <= 0x4e: // atomic loads, stores, rmw, cmpxchg
		return immMemArg
	}
	return immInvalid
}
