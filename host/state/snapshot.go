package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"

	"google.golang.org/protobuf/encoding/protowire"
)

// encoding is a journal's checkpoint payload kept record by record, so that a
// Snapshot encodes only the records changed since the last one (see
// RATIONALE.md, "Why does the journal keep its records encoded?").
type encoding struct {
	// valid says recs hold every record as of the last Snapshot, with
	// stale and staleGroups naming what changed since; when false the next
	// Snapshot encodes every record and nothing is tracked until then.
	valid bool
	// recs holds each kind's records, sorted by id. A slice and the bytes
	// it holds are never modified once built: a Snapshot shares them, and
	// the next Snapshot builds new slices for the kinds that changed.
	recs [3][]encodedRecord
	size int // the payload's length: every record's bytes
	// stale holds the records changed since the last Snapshot: true for a
	// whole record, false for a container whose assignment alone changed.
	// staleGroups holds the grouped updates applied since, whose members'
	// assignments changed, and staleGrouped counts their members.
	stale        map[key]bool
	staleGroups  []*abi.ContainerUpdate
	staleGrouped int
}

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

// markStale notes that the record (kind, id) changed since the last Snapshot.
func (e *encoding) markStale(kind byte, id string) {
	if e.valid {
		e.stale[key{kind, id}] = true
	}
}

// addStaleGroup notes that the members of g, a grouped update already
// applied, changed since the last Snapshot. Like the journal's groups, the
// ones kept are bounded: past foldFactor members per journaled container they
// are folded into stale.
func (e *encoding) addStaleGroup(g *abi.ContainerUpdate, containers int) {
	if !e.valid {
		return
	}
	e.staleGroups = append(e.staleGroups, g)
	e.staleGrouped += 1 + len(g.GetAlsoContainerIds())
	if e.staleGrouped > foldFactor*containers {
		e.foldGroups()
	}
}

// foldGroups moves the members of the kept grouped updates into stale, as
// changes of their assignments alone.
func (e *encoding) foldGroups() {
	for _, g := range e.staleGroups {
		e.markAssignment(g.GetContainerId())
		for _, id := range g.GetAlsoContainerIds() {
			e.markAssignment(id)
		}
	}
	clear(e.staleGroups)
	e.staleGroups, e.staleGrouped = e.staleGroups[:0], 0
}

// markAssignment notes that container id's assignment changed, unless its
// whole record did.
func (e *encoding) markAssignment(id string) {
	k := key{kindContainer, id}
	if !e.stale[k] {
		e.stale[k] = false
	}
}

// invalidate makes the next Snapshot encode every record.
func (e *encoding) invalidate() {
	*e = encoding{}
}

// Snapshot is a journal's checkpoint as of one moment, its records already
// encoded: it stays valid and unchanged whatever happens to the journal after,
// and may be used from any goroutine.
type Snapshot struct {
	recs [3][]encodedRecord
	size int
}

// Snapshot returns j's checkpoint as it is now. Only the records changed since
// the previous Snapshot are encoded; the others' bytes are shared with it. The
// agent takes it under its lock and writes it (Snapshot.Marshal, SaveEncoded)
// outside: the cost under the lock is that of what changed and of copying the
// list of records, not of encoding the journal.
//
// The journal keeps its records encoded from the first Snapshot on: about the
// checkpoint's size, for as long as j lives.
func (j *Journal) Snapshot() (*Snapshot, error) {
	e := &j.enc
	if err := j.updateEncoding(); err != nil {
		e.invalidate()
		return nil, fmt.Errorf("encode journal: %w", err)
	}
	return &Snapshot{recs: e.recs, size: e.size}, nil
}

// updateEncoding brings j.enc up to date with j's records.
func (j *Journal) updateEncoding() error {
	e := &j.enc
	if !e.valid {
		*e = encoding{stale: map[key]bool{}}
		for kind := range e.recs {
			if err := j.mergeEncoded(byte(kind), j.sortedRecords(byte(kind))); err != nil {
				return err
			}
		}
		e.valid = true
		return nil
	}
	e.foldGroups()
	if len(e.stale) == 0 {
		return nil
	}
	var changed [3][]staleRecord
	for k, whole := range e.stale {
		changed[k.kind] = append(changed[k.kind], staleRecord{k.id, whole})
	}
	clear(e.stale)
	for kind, recs := range changed {
		if len(recs) == 0 {
			continue
		}
		slices.SortFunc(recs, func(a, b staleRecord) int { return strings.Compare(a.id, b.id) })
		if err := j.mergeEncoded(byte(kind), recs); err != nil {
			return err
		}
	}
	return nil
}

// staleRecord names a record changed since the last Snapshot: whole, or a
// container's assignment alone.
type staleRecord struct {
	id    string
	whole bool
}

// mergeEncoded replaces the encoded records of kind with a new list: the old
// one's, with each of changed, sorted by id, encoded afresh (its assignment
// alone where only that changed) or dropped if no longer journaled.
func (j *Journal) mergeEncoded(kind byte, changed []staleRecord) error {
	e := &j.enc
	old := e.recs[kind]
	merged := make([]encodedRecord, 0, len(old)+len(changed))
	i := 0
	for _, s := range changed {
		id := s.id
		for i < len(old) && old[i].id < id {
			merged = append(merged, old[i])
			i++
		}
		var prev *encodedRecord
		if i < len(old) && old[i].id == id {
			prev = &old[i]
			e.size -= len(prev.b)
			i++
		}
		if s.whole {
			prev = nil
		}
		r, ok, err := j.encodeRecord(kind, id, prev)
		if err != nil {
			return fmt.Errorf("%s %q: %w", kindNames[kind], id, err)
		}
		if ok {
			merged = append(merged, r)
			e.size += len(r.b)
		}
	}
	e.recs[kind] = append(merged, old[i:]...)
	return nil
}

// kindNames names the kinds of records in errors.
var kindNames = [3]string{kindPod: "pod", kindContainer: "container", kindClaim: "claim"}

// sortedRecords lists j's records of kind, whole, sorted by id.
func (j *Journal) sortedRecords(kind byte) []staleRecord {
	var ids []string
	switch kind {
	case kindPod:
		ids = slices.Sorted(maps.Keys(j.pods))
	case kindContainer:
		ids = slices.Sorted(maps.Keys(j.containers))
	default:
		ids = slices.Sorted(maps.Keys(j.claims))
	}
	recs := make([]staleRecord, len(ids))
	for i, id := range ids {
		recs[i] = staleRecord{id, true}
	}
	return recs
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

// Marshal appends the checkpoint to buf (which may be nil): the bytes Marshal
// writes for the journal as it was when the Snapshot was taken.
func (s *Snapshot) Marshal(buf []byte) ([]byte, error) {
	if uint64(s.size) > 1<<32-1 {
		return nil, errPayloadTooLong
	}
	start := len(buf)
	buf = appendHeader(buf, s.size)
	buf = slices.Grow(buf, s.size)
	for _, recs := range s.recs {
		for _, r := range recs {
			buf = append(buf, r.b...)
		}
	}
	return sealHeader(buf, start), nil
}
