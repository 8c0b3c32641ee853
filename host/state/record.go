package state

import (
	abi "github.com/nriwasm/nriwasm/abi/v1"

	"google.golang.org/protobuf/encoding/protowire"
)

// encodedRecord is one record as the checkpoint's payload holds it: the
// field's tag, the length and the record's protobuf encoding. For a container
// whose assignment can be encoded again alone, b[assign[0]:assign[1]] is its
// assignment field (empty when it has none, at its place in field order);
// otherwise assign[0] is -1.
type encodedRecord struct {
	id     string
	b      []byte
	assign [2]int
}

// encodeRecord encodes j's record (kind, id) as the checkpoint's payload holds
// it, reporting false if it is not journaled. prev is its last encoding if
// only a container's assignment changed since, and nil otherwise: the
// container keeps the rest of prev's bytes.
func (j *Journal) encodeRecord(kind byte, id string, prev *encodedRecord) (encodedRecord, bool, error) {
	r := encodedRecord{id: id, assign: [2]int{-1, -1}}
	var err error
	switch kind {
	case kindPod:
		p, ok := j.pods[id]
		if !ok {
			return r, false, nil
		}
		r.b, err = encodeField(kind, p)
	case kindContainer:
		c, ok := j.containers[id]
		if !ok {
			return r, false, nil
		}
		if prev != nil && prev.assign[0] >= 0 {
			r, err = reencodeAssignment(prev, c)
			return r, err == nil, err
		}
		r.b, err = encodeField(kind, c)
		if err == nil && len(c.ProtoReflect().GetUnknown()) == 0 {
			r.assign, err = assignmentField(r.b)
		}
	default:
		c, ok := j.claims[id]
		if !ok {
			return r, false, nil
		}
		r.b, err = encodeField(kind, c)
	}
	return r, err == nil, err
}

// encodeField encodes m as an element of the abi.RestoreState field of kind
// (pods, containers, claims: fields 1, 2, 3), as vtprotobuf writes it there.
func encodeField[M interface {
	SizeVT() int
	MarshalToSizedBufferVT([]byte) (int, error)
}](kind byte, m M) ([]byte, error) {
	size := m.SizeVT()
	b := make([]byte, 0, 1+varintLen(size)+size)
	b = append(b, (kind+1)<<3|byte(protowire.BytesType))
	b = protowire.AppendVarint(b, uint64(size))
	n := len(b)
	b = b[:n+size]
	if _, err := m.MarshalToSizedBufferVT(b[n:]); err != nil {
		return nil, err
	}
	return b, nil
}

func varintLen(n int) int { return protowire.SizeVarint(uint64(n)) }

// payloadStart is where the record encodeField wrote in b starts: after its
// one-byte tag and its length.
func payloadStart(b []byte) int {
	_, n := protowire.ConsumeVarint(b[1:])
	return 1 + n
}

// assignmentFieldNumber is abi.Container's assignment field.
const assignmentFieldNumber = 12

// assignmentField finds the assignment field in b, a container encoded by
// encodeField with no unknown fields: vtprotobuf writes the fields in number
// order, so it is the field numbered 12, or none where the first field past
// 12 starts (or at the end).
func assignmentField(b []byte) ([2]int, error) {
	off := payloadStart(b)
	for off < len(b) {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return [2]int{}, protowire.ParseError(n)
		}
		if num >= assignmentFieldNumber {
			if num > assignmentFieldNumber {
				return [2]int{off, off}, nil
			}
			v := protowire.ConsumeFieldValue(num, typ, b[off+n:])
			if v < 0 {
				return [2]int{}, protowire.ParseError(v)
			}
			return [2]int{off, off + n + v}, nil
		}
		v := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if v < 0 {
			return [2]int{}, protowire.ParseError(v)
		}
		off += n + v
	}
	return [2]int{off, off}, nil
}

// reencodeAssignment encodes container c, whose assignment alone changed
// since prev was encoded: prev's other fields, c's assignment between them.
func reencodeAssignment(prev *encodedRecord, c *abi.Container) (encodedRecord, error) {
	head, tail := prev.b[payloadStart(prev.b):prev.assign[0]], prev.b[prev.assign[1]:]
	a := c.GetAssignment()
	field, asize := 0, a.SizeVT()
	if a != nil {
		field = protowire.SizeTag(assignmentFieldNumber) + varintLen(asize) + asize
	}
	size := len(head) + field + len(tail)
	b := make([]byte, 0, 1+varintLen(size)+size)
	b = append(b, prev.b[0])
	b = protowire.AppendVarint(b, uint64(size))
	b = append(b, head...)
	start := len(b)
	if a != nil {
		b = protowire.AppendTag(b, assignmentFieldNumber, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(asize))
		n := len(b)
		b = b[:n+asize]
		if _, err := a.MarshalToSizedBufferVT(b[n:]); err != nil {
			return encodedRecord{}, err
		}
	}
	end := len(b)
	b = append(b, tail...)
	return encodedRecord{id: prev.id, b: b, assign: [2]int{start, end}}, nil
}
