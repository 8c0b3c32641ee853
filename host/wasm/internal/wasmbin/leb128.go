package wasmbin

import "fmt"

// decodeUnsigned decodes an unsigned LEB128 number of at most bits bits from
// the start of b. It returns the value and the number of bytes consumed.
func decodeUnsigned(b []byte, bits uint) (uint64, int, error) {
	maxLen := int((bits + 6) / 7)
	var v uint64
	var shift uint
	for i := 0; i < maxLen; i++ {
		if i >= len(b) {
			return 0, 0, ErrTruncated
		}
		c := b[i]
		if i == maxLen-1 {
			rem := bits - shift // value bits carried by the last byte
			if c&0x80 != 0 || (rem < 7 && c>>rem != 0) {
				return 0, 0, fmt.Errorf("u%d: %w", bits, ErrOverflow)
			}
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
		shift += 7
	}
	panic("unreachable") // the last iteration always returns
}

// decodeSigned decodes a signed LEB128 number of at most bits bits from the
// start of b. It returns the value and the number of bytes consumed.
func decodeSigned(b []byte, bits uint) (int64, int, error) {
	maxLen := int((bits + 6) / 7)
	var v int64
	var shift uint
	for i := 0; i < maxLen; i++ {
		if i >= len(b) {
			return 0, 0, ErrTruncated
		}
		c := b[i]
		if i == maxLen-1 {
			rem := bits - shift // value bits, sign included, in the last byte
			// Bits above the sign bit must all repeat the sign bit.
			mask := byte(0x7f) &^ (byte(1)<<(rem-1) - 1)
			if c&0x80 != 0 || (c&mask != 0 && c&mask != mask) {
				return 0, 0, fmt.Errorf("s%d: %w", bits, ErrOverflow)
			}
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1, nil
		}
	}
	panic("unreachable") // the last iteration always returns
}

// AppendU32 appends the unsigned LEB128 encoding of v to dst.
func AppendU32(dst []byte, v uint32) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// AppendName appends the length-prefixed encoding of name to dst. name must
// be shorter than 4 GiB.
func AppendName(dst []byte, name string) []byte {
	dst = AppendU32(dst, uint32(len(name)))
	return append(dst, name...)
}

// Reader walks a byte slice that starts at absolute module offset base, so
// that errors name positions in the whole module. Every method fails with an
// error wrapping ErrTruncated rather than read past the end of the slice.
type Reader struct {
	buf  []byte
	pos  int
	base int
}

// NewReader returns a Reader over buf, which starts at offset base of the
// module (0 for a whole module).
func NewReader(buf []byte, base int) *Reader {
	return &Reader{buf: buf, base: base}
}

// Offset returns the absolute module offset of the next unread byte.
func (r *Reader) Offset() int { return r.base + r.pos }

// Remaining reports how many bytes are left.
func (r *Reader) Remaining() int { return len(r.buf) - r.pos }

func (r *Reader) fail(err error) error {
	return fmt.Errorf("at offset %d: %w", r.Offset(), err)
}

// Byte reads one byte.
func (r *Reader) Byte() (byte, error) {
	if r.pos >= len(r.buf) {
		return 0, r.fail(ErrTruncated)
	}
	c := r.buf[r.pos]
	r.pos++
	return c, nil
}

// Peek returns the next byte without consuming it.
func (r *Reader) Peek() (byte, error) {
	if r.pos >= len(r.buf) {
		return 0, r.fail(ErrTruncated)
	}
	return r.buf[r.pos], nil
}

// Bytes reads n bytes, returning a sub-slice of the input.
func (r *Reader) Bytes(n int) ([]byte, error) {
	if n < 0 || n > r.Remaining() {
		return nil, r.fail(fmt.Errorf("need %d bytes, have %d: %w", n, r.Remaining(), ErrTruncated))
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// Skip consumes n bytes.
func (r *Reader) Skip(n int) error {
	_, err := r.Bytes(n)
	return err
}

func (r *Reader) unsigned(bits uint) (uint64, error) {
	v, n, err := decodeUnsigned(r.buf[r.pos:], bits)
	if err != nil {
		return 0, r.fail(err)
	}
	r.pos += n
	return v, nil
}

func (r *Reader) signed(bits uint) (int64, error) {
	v, n, err := decodeSigned(r.buf[r.pos:], bits)
	if err != nil {
		return 0, r.fail(err)
	}
	r.pos += n
	return v, nil
}

// U32 reads an unsigned 32-bit LEB128 number.
func (r *Reader) U32() (uint32, error) {
	v, err := r.unsigned(32)
	return uint32(v), err
}

// U64 reads an unsigned 64-bit LEB128 number.
func (r *Reader) U64() (uint64, error) { return r.unsigned(64) }

// S32 reads a signed 32-bit LEB128 number.
func (r *Reader) S32() (int32, error) {
	v, err := r.signed(32)
	return int32(v), err
}

// S33 reads a signed 33-bit LEB128 number (block and heap types).
func (r *Reader) S33() (int64, error) { return r.signed(33) }

// S64 reads a signed 64-bit LEB128 number.
func (r *Reader) S64() (int64, error) { return r.signed(64) }

// Name reads a length-prefixed byte string.
func (r *Reader) Name() (string, error) {
	n, err := r.U32()
	if err != nil {
		return "", err
	}
	b, err := r.Bytes(int(n))
	if err != nil {
		return "", err
	}
	return string(b), nil
}
