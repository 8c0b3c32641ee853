package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// The checkpoint format, version 1 (see RATIONALE.md), all integers big-endian:
//
//	offset  size  field
//	0       8     magic "NRIWASM\x00"
//	8       4     version, 1
//	12      4     payload length in bytes
//	16      4     CRC-32C (Castagnoli) of the payload
//	20      n     payload: an abi.v1.RestoreState in protobuf encoding
//
// The magic and the version field keep their place in every later version.
const (
	// Version is the checkpoint format version Save writes.
	Version    = 1
	magic      = "NRIWASM\x00"
	headerSize = 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// Reasons a checkpoint is rejected; a *FormatError wraps one of them.
var (
	ErrNotCheckpoint  = errors.New("not a checkpoint (bad magic)")
	ErrVersion        = errors.New("unsupported format version")
	ErrTruncated      = errors.New("truncated")
	ErrTrailing       = errors.New("trailing bytes after the payload")
	ErrChecksum       = errors.New("checksum mismatch")
	ErrUndecodable    = errors.New("payload does not decode")
	ErrDuplicate      = errors.New("a record appears twice")
	errPayloadTooLong = errors.New("payload over 4 GiB")
)

// FormatError says why bytes are not a checkpoint this package can read.
type FormatError struct {
	Reason error  // one of the Err variables above
	Detail string // what was found, e.g. "version 7, this build reads 1"
}

func (e *FormatError) Error() string {
	if e.Detail == "" {
		return "checkpoint format: " + e.Reason.Error()
	}
	return "checkpoint format: " + e.Reason.Error() + ": " + e.Detail
}

func (e *FormatError) Unwrap() error { return e.Reason }

// Marshal encodes j in the checkpoint format, appending to buf (which may be nil).
// Records come sorted by id; entries of a map (labels, annotations) come in Go's
// map order, so equal journals with multi-entry maps may differ byte for byte.
func Marshal(buf []byte, j *Journal) ([]byte, error) {
	rs := j.restoreState()
	size := rs.SizeVT()
	if uint64(size) > 1<<32-1 {
		return nil, errPayloadTooLong
	}
	start := len(buf)
	buf = appendHeader(buf, size)
	buf = slices.Grow(buf, size)[:len(buf)+size]
	if _, err := rs.MarshalToSizedBufferVT(buf[start+headerSize:]); err != nil {
		return nil, fmt.Errorf("marshal restore state: %w", err)
	}
	return sealHeader(buf, start), nil
}

// appendHeader appends a checkpoint's header for a payload of size bytes,
// its checksum left zero for sealHeader.
func appendHeader(buf []byte, size int) []byte {
	buf = append(buf, magic...)
	buf = binary.BigEndian.AppendUint32(buf, Version)
	buf = binary.BigEndian.AppendUint32(buf, uint32(size))
	return binary.BigEndian.AppendUint32(buf, 0)
}

// sealHeader fills in the checksum of the checkpoint that starts at buf[start]
// and runs to buf's end.
func sealHeader(buf []byte, start int) []byte {
	binary.BigEndian.PutUint32(buf[start+16:], crc(buf[start+headerSize:]))
	return buf
}

// Unmarshal decodes a checkpoint. Any error is a *FormatError.
func Unmarshal(data []byte) (*Journal, error) {
	fail := func(reason error, format string, args ...any) (*Journal, error) {
		return nil, &FormatError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	if n := min(len(data), len(magic)); string(data[:n]) != magic[:n] {
		return fail(ErrNotCheckpoint, "starts with %q", data[:n])
	}
	if len(data) >= len(magic)+4 {
		if v := binary.BigEndian.Uint32(data[len(magic):]); v != Version {
			return fail(ErrVersion, "version %d, this build reads %d", v, Version)
		}
	}
	if len(data) < headerSize {
		return fail(ErrTruncated, "%d bytes, the header alone is %d", len(data), headerSize)
	}
	size := uint64(binary.BigEndian.Uint32(data[12:]))
	switch got := uint64(len(data) - headerSize); {
	case got < size:
		return fail(ErrTruncated, "payload of %d bytes, header says %d", got, size)
	case got > size:
		return fail(ErrTrailing, "%d bytes after a payload of %d", got-size, size)
	}
	payload := data[headerSize:]
	if want, got := binary.BigEndian.Uint32(data[16:]), crc(payload); want != got {
		return fail(ErrChecksum, "header says %08x, payload has %08x", want, got)
	}
	rs := &abi.RestoreState{}
	if err := rs.UnmarshalVT(payload); err != nil {
		return fail(ErrUndecodable, "%v", err)
	}
	if dup := duplicate(rs); dup != "" {
		return fail(ErrDuplicate, "%s", dup)
	}
	return fromRestoreState(rs, false), nil
}

// duplicate names the first id that two records of rs share, "" if none:
// Marshal never writes one twice, so such a payload is not what it wrote.
func duplicate(rs *abi.RestoreState) string {
	seen := map[string]bool{}
	check := func(kind, id string) bool {
		key := kind + "\x00" + id
		if seen[key] {
			return true
		}
		seen[key] = true
		return false
	}
	for _, p := range rs.GetPods() {
		if check("pod", p.GetId()) {
			return fmt.Sprintf("pod %q", p.GetId())
		}
	}
	for _, c := range rs.GetContainers() {
		if check("container", c.GetId()) {
			return fmt.Sprintf("container %q", c.GetId())
		}
	}
	for _, c := range rs.GetClaims() {
		if check("claim", c.GetClaim().GetUid()) {
			return fmt.Sprintf("claim %q", c.GetClaim().GetUid())
		}
	}
	return ""
}
