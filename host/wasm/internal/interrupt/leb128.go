package interrupt

import (
	"errors"
	"fmt"
)

var (
	// errTruncated reports input that ends in the middle of a construct.
	errTruncated = errors.New("unexpected end of input")
	// errOverflow reports a LEB128 number that does not fit its declared width.
	errOverflow = errors.New("LEB128 value overflows its type")
)

// decodeUnsigned decodes an unsigned LEB128 number of at most bits bits from
// the start of b. It returns the value and the number of bytes consumed.
func decodeUnsigned(b []byte, bits uint) (uint64, int, error) {
	maxLen := int((bits + 6) / 7)
	var v uint64
	var shift uint
	for i := 0; i < maxLen; i++ {
		if i >= len(b) {
			return 0, 0, errTruncated
		}
		c := b[i]
		if i == maxLen-1 {
			rem := bits - shift // value bits carried by the last byte
			if c&0x80 != 0 || (rem < 7 && c>>rem != 0) {
				return 0, 0, fmt.Errorf("u%d: %w", bits, errOverflow)
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
			return 0, 0, errTruncated
		}
		c := b[i]
		if i == maxLen-1 {
			rem := bits - shift // value bits, sign included, in the last byte
			// Bits above the sign bit must all repeat the sign bit.
			mask := byte(0x7f) &^ (byte(1)<<(rem-1) - 1)
			if c&0x80 != 0 || (c&mask != 0 && c&mask != mask) {
				return 0, 0, fmt.Errorf("s%d: %w", bits, errOverflow)
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

// appendU32 appends the unsigned LEB128 encoding of v to dst.
func appendU32(dst []byte, v uint32) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// reader walks a byte slice that starts at absolute module offset base, so
// that errors name positions in the whole module.
type reader struct {
	buf  []byte
	pos  int
	base int
}

// offset returns the absolute module offset of the next unread byte.
func (r *reader) offset() int { return r.base + r.pos }

// remaining reports how many bytes are left.
func (r *reader) remaining() int { return len(r.buf) - r.pos }

func (r *reader) fail(err error) error {
	return fmt.Errorf("at offset %d: %w", r.offset(), err)
}

// byte reads one byte.
func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.buf) {
		return 0, r.fail(errTruncated)
	}
	c := r.buf[r.pos]
	r.pos++
	return c, nil
}

// peek returns the next byte without consuming it.
func (r *reader) peek() (byte, error) {
	if r.pos >= len(r.buf) {
		return 0, r.fail(errTruncated)
	}
	return r.buf[r.pos], nil
}

// bytes reads n bytes, returning a sub-slice of the input.
func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > r.remaining() {
		return nil, r.fail(fmt.Errorf("need %d bytes, have %d: %w", n, r.remaining(), errTruncated))
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// skip consumes n bytes.
func (r *reader) skip(n int) error {
	_, err := r.bytes(n)
	return err
}

func (r *reader) unsigned(bits uint) (uint64, error) {
	v, n, err := decodeUnsigned(r.buf[r.pos:], bits)
	if err != nil {
		return 0, r.fail(err)
	}
	r.pos += n
	return v, nil
}

func (r *reader) signed(bits uint) (int64, error) {
	v, n, err := decodeSigned(r.buf[r.pos:], bits)
	if err != nil {
		return 0, r.fail(err)
	}
	r.pos += n
	return v, nil
}

// u32 reads an unsigned 32-bit LEB128 number.
func (r *reader) u32() (uint32, error) {
	v, err := r.unsigned(32)
	return uint32(v), err
}

// u64 reads an unsigned 64-bit LEB128 number.
func (r *reader) u64() (uint64, error) { return r.unsigned(64) }

// s32 reads a signed 32-bit LEB128 number.
func (r *reader) s32() (int32, error) {
	v, err := r.signed(32)
	return int32(v), err
}

// s33 reads a signed 33-bit LEB128 number (block and heap types).
func (r *reader) s33() (int64, error) { return r.signed(33) }

// s64 reads a signed 64-bit LEB128 number.
func (r *reader) s64() (int64, error) { return r.signed(64) }

// name reads a length-prefixed byte string.
func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(int(n))
	if err != nil {
		return "", err
	}
	return string(b), nil
}
