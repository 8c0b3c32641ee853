package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// encoding is a journal's checkpoint payload kept record by record, so that a
// Snapshot encodes only the records changed since the last one (see
// RATIONALE.md, "Why does the journal keep its records encoded?").
type encoding struct {
	// valid says recs hold every record as of the last Snapshot, with
	// stale and groups naming what changed since; when false the next
	// Snapshot encodes every record and nothing is tracked until then.
	valid bool
	// recs holds each kind's records, sorted by id. A slice and the bytes
	// it holds are never modified once built: a Snapshot shares them, and
	// the next Snapshot builds new slices for the kinds that changed.
	recs [3][]encodedRecord
	size int // the payload's length: every record's bytes
	// stale holds the records changed since the last Snapshot: true for a
	// whole record, false for a container whose assignment alone changed.
	// groups holds the grouped updates applied since, whose members'
	// assignments changed.
	stale  map[key]bool
	groups groupList
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
	if e.groups.add(g, containers) {
		e.foldGroups()
	}
}

// foldGroups moves the members of the kept grouped updates into stale, as
// changes of their assignments alone.
func (e *encoding) foldGroups() {
	e.groups.eachMember(e.markAssignment)
	e.groups.clear()
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
