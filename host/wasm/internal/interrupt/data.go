package interrupt

import (
	"cmp"
	"slices"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// dataGap is the widest run of zero bytes mergeData fills to join two data
// segments. wazero keeps about 100 bytes of Go heap per segment for as long
// as the module is loaded (the decoded segment, its offset expression, the
// instance's data slice), and a Go guest has tens of thousands of them (Go's
// linker starts a new segment after every run of more than 8 zero bytes:
// topology-aware has 60,110, most 17–32 bytes apart); a filled zero costs one
// byte. Gaps up to 64 bytes join all but a few dozen segments.
const dataGap = 64

// segment is an active data segment of memory 0 at a constant offset.
type segment struct {
	offset uint64
	init   []byte
}

// mergeData returns the data section's payload with its segments sorted by
// offset and joined where the zero bytes between them are at most dataGap:
// the memory an instantiation initializes is the same bytes (memory starts
// zeroed, and no segment writes into a gap), with far fewer segments. It
// returns payload unchanged if any segment is not an active segment of
// memory 0 at an i32.const offset, if two segments overlap (then their order
// matters), or if the merge would not make fewer segments or would write
// more zeros than the section's size (a section of empty segments spread out
// would grow 64-fold). Code may name
// segments only in memory.init and data.drop, which need a data count
// section; the caller merges only without one.
func mergeData(payload []byte, base int) []byte {
	r := wasmbin.NewReader(payload, base)
	n, err := r.U32()
	if err != nil {
		return payload
	}
	// A segment takes at least 5 bytes: do not trust the count for more.
	segs := make([]segment, 0, min(int(n), len(payload)/5))
	for range n {
		flags, err := r.U32()
		if err != nil || flags != 0 {
			return payload
		}
		if op, err := r.Byte(); err != nil || op != opI32Const {
			return payload
		}
		off, err := r.S32()
		if err != nil {
			return payload
		}
		if end, err := r.Byte(); err != nil || end != opEnd {
			return payload
		}
		size, err := r.U32()
		if err != nil {
			return payload
		}
		init, err := r.Bytes(int(size))
		if err != nil {
			return payload
		}
		segs = append(segs, segment{offset: uint64(uint32(off)), init: init})
	}
	if r.Remaining() != 0 {
		return payload
	}
	slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Compare(a.offset, b.offset) })
	runs, zeros := 0, 0
	for i, s := range segs {
		if s.offset+uint64(len(s.init)) > 1<<32 {
			return payload // past any memory: instantiation fails as it is
		}
		if i > 0 {
			end := segs[i-1].offset + uint64(len(segs[i-1].init))
			if s.offset < end {
				return payload // overlapping: the order they are applied in matters
			}
			if s.offset-end <= dataGap {
				zeros += int(s.offset - end)
				continue
			}
		}
		runs++
	}
	if runs >= len(segs) || zeros > len(payload) {
		return payload // nothing to join, or more zeros than the section holds
	}
	out := wasmbin.AppendU32(make([]byte, 0, len(payload)+runs*dataGap), uint32(runs))
	for i := 0; i < len(segs); {
		j, end := i+1, segs[i].offset+uint64(len(segs[i].init))
		for j < len(segs) && segs[j].offset-end <= dataGap {
			end = segs[j].offset + uint64(len(segs[j].init))
			j++
		}
		out = append(out, 0x00, opI32Const)
		out = appendS32(out, int32(uint32(segs[i].offset)))
		out = append(out, opEnd)
		out = wasmbin.AppendU32(out, uint32(end-segs[i].offset))
		at := len(out)
		out = append(out, make([]byte, end-segs[i].offset)...)
		for _, s := range segs[i:j] {
			copy(out[at+int(s.offset-segs[i].offset):], s.init)
		}
		i = j
	}
	return out
}

// appendS32 appends v as a signed LEB128.
func appendS32(dst []byte, v int32) []byte {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(dst, b)
		}
		dst = append(dst, b|0x80)
	}
}
