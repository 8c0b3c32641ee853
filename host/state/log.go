package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// The decision log, version 2 (see RATIONALE.md, "Why a decision log?"), all
// integers big-endian. The file <checkpoint>.log starts with
//
//	offset  size  field
//	0       8     magic "NRIWLOG\x00"
//	8       4     version, 2
//
// and holds records, each the changes of one call, appended with one write:
//
//	size  field
//	4     payload length in bytes
//	4     CRC-32C (Castagnoli) of the payload
//	n     payload
//
// The payload is a uvarint length and an abi.v1.RestoreState in protobuf
// encoding (the records that exist: their whole new value), then, for pods,
// containers and claims in turn, a uvarint count of removed ids and each id
// as a uvarint length and its bytes. Version 2 adds, only to a record whose
// call applied grouped updates, a uvarint count of them and each as a uvarint
// length and an abi.v1.ContainerUpdate in protobuf encoding: its values and the
// members it changed (container_id, also_container_ids). A record without
// groups is the same in both versions.
//
// Replaying a record applies its grouped updates first, in order, then the
// whole records, then the removals. The whole records are the values after
// the call, so a member the call also changed otherwise ends as it did; a
// grouped update only sets fields of containers that exist, as ApplyUpdate
// does. Every record thus replaces values, never adds to them, and replaying
// the log over any checkpoint written since its first record gives the same
// journal: a full save keeps the records appended after its copy.
const (
	// LogVersion is the decision log format version AppendDelta writes.
	// ReplayLog reads it and version 1; Append turns a version-1 log's
	// header into this version's before it appends to it.
	LogVersion    = 2
	logMagic      = "NRIWLOG\x00"
	logHeaderSize = 12
	frameSize     = 8
	// logSuffix names the log beside the checkpoint.
	logSuffix = ".log"
	// logCorruptPrefix names log bytes Load set aside: checkpoint.log.corrupt-1, …
	logCorruptPrefix = FileName + logSuffix + ".corrupt-"
)

// LogPath returns the decision log's path: the checkpoint's, with ".log".
func (c *Checkpoint) LogPath() string { return c.Path() + logSuffix }

// AppendDelta appends to buf one framed log record of every record j changed
// since the last ClearDelta, and returns buf unchanged when nothing changed.
// The changes stay pending until ClearDelta: call it once the record is
// written.
func (j *Journal) AppendDelta(buf []byte) ([]byte, error) {
	if len(j.dirty) == 0 && len(j.groups.list) == 0 {
		return buf, nil
	}
	var rs abi.RestoreState
	var removed [3][]string
	for _, k := range slices.SortedFunc(maps.Keys(j.dirty), func(a, b key) int {
		if a.kind != b.kind {
			return int(a.kind) - int(b.kind)
		}
		return strings.Compare(a.id, b.id)
	}) {
		var ok bool
		switch k.kind {
		case kindPod:
			var p *abi.PodSandbox
			if p, ok = j.pods[k.id]; ok {
				rs.Pods = append(rs.Pods, p)
			}
		case kindContainer:
			var c *abi.Container
			if c, ok = j.containers[k.id]; ok {
				rs.Containers = append(rs.Containers, c)
			}
		case kindClaim:
			var c *abi.PreparedClaim
			if c, ok = j.claims[k.id]; ok {
				rs.Claims = append(rs.Claims, c)
			}
		}
		if !ok {
			removed[k.kind] = append(removed[k.kind], k.id)
		}
	}
	start := len(buf)
	buf = append(buf, make([]byte, frameSize)...)
	size := rs.SizeVT()
	buf = binary.AppendUvarint(buf, uint64(size))
	buf = slices.Grow(buf, size)[:len(buf)+size]
	if _, err := rs.MarshalToSizedBufferVT(buf[len(buf)-size:]); err != nil {
		return buf[:start], fmt.Errorf("encode log record: %w", err)
	}
	for _, ids := range removed {
		buf = binary.AppendUvarint(buf, uint64(len(ids)))
		for _, id := range ids {
			buf = binary.AppendUvarint(buf, uint64(len(id)))
			buf = append(buf, id...)
		}
	}
	if len(j.groups.list) > 0 {
		buf = binary.AppendUvarint(buf, uint64(len(j.groups.list)))
		for _, g := range j.groups.list {
			size := g.SizeVT()
			buf = binary.AppendUvarint(buf, uint64(size))
			buf = slices.Grow(buf, size)[:len(buf)+size]
			if _, err := g.MarshalToSizedBufferVT(buf[len(buf)-size:]); err != nil {
				return buf[:start], fmt.Errorf("encode log record's grouped update: %w", err)
			}
		}
	}
	payload := buf[start+frameSize:]
	if uint64(len(payload)) > 1<<32-1 {
		return buf[:start], errPayloadTooLong
	}
	binary.BigEndian.PutUint32(buf[start:], uint32(len(payload)))
	binary.BigEndian.PutUint32(buf[start+4:], crc(payload))
	return buf, nil
}

// ClearDelta forgets the pending changes: the last AppendDelta's record is
// written.
func (j *Journal) ClearDelta() {
	clear(j.dirty)
	j.groups.clear()
}

// Reasons a log record is rejected; a *LogError wraps one of them (or
// ErrNotCheckpoint, ErrVersion for the log's header).
var (
	ErrTornRecord   = errors.New("torn record (a crash mid-append)")
	ErrRecordDecode = errors.New("record does not decode")
)

// LogError reports the part of the decision log Load could not replay: the
// records before Offset were replayed, the bytes from Offset on were moved to
// MovedTo ("" if that failed too) and cut from the log.
type LogError struct {
	Path    string
	Offset  int64
	MovedTo string
	Err     error
}

func (e *LogError) Error() string {
	return fmt.Sprintf("decision log %s: replayed up to byte %d, the rest set aside as %s: %v", e.Path, e.Offset, filepath.Base(e.MovedTo), e.Err)
}

func (e *LogError) Unwrap() error { return e.Err }

// ReplayLog applies to j the records of a decision log's bytes, in order, and
// returns the length of the valid prefix. It stops at the first record that is
// torn, fails its checksum or does not decode, with an error saying why; the
// records before it are applied. j's pending changes are left as they were.
func ReplayLog(j *Journal, data []byte) (int, error) {
	if n := min(len(data), len(logMagic)); string(data[:n]) != logMagic[:n] {
		return 0, &FormatError{Reason: ErrNotCheckpoint, Detail: fmt.Sprintf("log starts with %q", data[:n])}
	}
	if len(data) < logHeaderSize {
		return 0, &FormatError{Reason: ErrTornRecord, Detail: fmt.Sprintf("log header of %d bytes, want %d", len(data), logHeaderSize)}
	}
	if v := binary.BigEndian.Uint32(data[len(logMagic):]); v < 1 || v > LogVersion {
		return 0, &FormatError{Reason: ErrVersion, Detail: fmt.Sprintf("log version %d, this build reads 1 to %d", v, LogVersion)}
	}
	off := logHeaderSize
	for off < len(data) {
		rest := data[off:]
		if len(rest) < frameSize {
			return off, &FormatError{Reason: ErrTornRecord, Detail: fmt.Sprintf("%d bytes of a %d-byte frame", len(rest), frameSize)}
		}
		size := uint64(binary.BigEndian.Uint32(rest))
		if got := uint64(len(rest) - frameSize); got < size {
			return off, &FormatError{Reason: ErrTornRecord, Detail: fmt.Sprintf("payload of %d bytes, frame says %d", got, size)}
		}
		payload := rest[frameSize : frameSize+size]
		if want, got := binary.BigEndian.Uint32(rest[4:]), crc(payload); want != got {
			return off, &FormatError{Reason: ErrChecksum, Detail: fmt.Sprintf("record at byte %d: frame says %08x, payload has %08x", off, want, got)}
		}
		if err := applyRecord(j, payload); err != nil {
			return off, &FormatError{Reason: ErrRecordDecode, Detail: fmt.Sprintf("record at byte %d: %v", off, err)}
		}
		off += frameSize + int(size)
	}
	return off, nil
}

// applyRecord decodes a whole record before it changes j: a record is applied
// entirely or not at all.
func applyRecord(j *Journal, payload []byte) error {
	next := func(what string) ([]byte, error) {
		n, k := binary.Uvarint(payload)
		if k <= 0 || n > uint64(len(payload)-k) {
			return nil, fmt.Errorf("%s: length past the record's end", what)
		}
		b := payload[k : k+int(n)]
		payload = payload[k+int(n):]
		return b, nil
	}
	b, err := next("restore state")
	if err != nil {
		return err
	}
	rs := &abi.RestoreState{}
	if err := rs.UnmarshalVT(b); err != nil {
		return fmt.Errorf("restore state: %w", err)
	}
	var removed [3][]string
	for kind := range removed {
		n, k := binary.Uvarint(payload)
		if k <= 0 || n > uint64(len(payload)) {
			return fmt.Errorf("removed ids of kind %d: count past the record's end", kind)
		}
		payload = payload[k:]
		for range n {
			id, err := next("removed id")
			if err != nil {
				return err
			}
			removed[kind] = append(removed[kind], string(id))
		}
	}
	var groups []*abi.ContainerUpdate
	if len(payload) > 0 {
		n, k := binary.Uvarint(payload)
		if k <= 0 || n > uint64(len(payload)) {
			return errors.New("grouped updates: count past the record's end")
		}
		payload = payload[k:]
		for range n {
			b, err := next("grouped update")
			if err != nil {
				return err
			}
			g := &abi.ContainerUpdate{}
			if err := g.UnmarshalVT(b); err != nil {
				return fmt.Errorf("grouped update: %w", err)
			}
			groups = append(groups, g)
		}
	}
	if len(payload) > 0 {
		return fmt.Errorf("%d bytes after the grouped updates", len(payload))
	}
	j.enc.invalidate() // the records below change unmarked
	for _, g := range groups {
		j.applyTo(g.GetContainerId(), g)
		for _, id := range g.GetAlsoContainerIds() {
			j.applyTo(id, g)
		}
	}
	for _, p := range rs.GetPods() {
		j.pods[p.GetId()] = p
	}
	for _, c := range rs.GetContainers() {
		j.containers[c.GetId()] = c
	}
	for _, c := range rs.GetClaims() {
		j.claims[c.GetClaim().GetUid()] = c
	}
	for _, id := range removed[kindPod] {
		delete(j.pods, id)
	}
	for _, id := range removed[kindContainer] {
		delete(j.containers, id)
	}
	for _, id := range removed[kindClaim] {
		delete(j.claims, id)
	}
	j.generation++
	return nil
}

// Append writes one record AppendDelta encoded to the decision log with one
// write, without fsync: it outlives a crash of the agent, not of the node (the
// next Save makes it durable). The log is created with its header if missing.
// A version-1 log's header is turned into this version's first: its records
// are version 2's too, and a build that reads only version 1 must not read
// the grouped updates that follow. Safe to call while Save runs; not with
// another Append, LogMark or TrimLog.
func (c *Checkpoint) Append(record []byte) error {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if c.log == nil {
		if err := c.openLog(); err != nil {
			return fmt.Errorf("append to decision log: %w", err)
		}
	}
	if _, err := c.log.Write(record); err != nil {
		// A short write leaves a torn tail Load sets aside; start afresh
		// from the file's end at the next Append.
		_ = c.log.Close()
		c.log = nil
		return fmt.Errorf("append to decision log: %w", err)
	}
	c.logSize += int64(len(record))
	return nil
}

// openLog opens the log for appending, writing its header if it is empty and
// raising a version-1 header to LogVersion.
func (c *Checkpoint) openLog() error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(c.LogPath(), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && st.Size() == 0 {
		_, err = f.Write(logHeader())
	} else if err == nil && st.Size() >= logHeaderSize {
		err = raiseLogVersion(c.LogPath(), f)
	}
	if err != nil {
		_ = f.Close()
		return err
	}
	c.log, c.logSize = f, max(st.Size(), logHeaderSize)
	return nil
}

// raiseLogVersion rewrites, in place, the version of a log whose header says
// version 1 (f, open for appending, reads it; path writes it). One 4-byte write
// inside the first block: a crash leaves either version, and both read the
// same records.
func raiseLogVersion(path string, f *os.File) error {
	var h [logHeaderSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return fmt.Errorf("read decision log header: %w", err)
	}
	if string(h[:len(logMagic)]) != logMagic || binary.BigEndian.Uint32(h[len(logMagic):]) != 1 {
		return nil
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("raise decision log version: %w", err)
	}
	_, err = w.WriteAt(binary.BigEndian.AppendUint32(nil, LogVersion), int64(len(logMagic)))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("raise decision log version: %w", err)
	}
	return nil
}

func logHeader() []byte {
	return binary.BigEndian.AppendUint32([]byte(logMagic), LogVersion)
}

// CloseLog closes the decision log's file, if open; a later Append reopens it.
func (c *Checkpoint) CloseLog() error {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if c.log == nil {
		return nil
	}
	err := c.log.Close()
	c.log = nil
	if err != nil {
		return fmt.Errorf("close decision log: %w", err)
	}
	return nil
}

// LogMark returns the log's current length. A Save of a journal copied at the
// same time covers every record before it: pass it to TrimLog once saved.
func (c *Checkpoint) LogMark() int64 {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	return c.logSize
}

// TrimLog drops the records before mark, which a durable Save covers, keeping
// those appended since. With nothing after mark the log is truncated to its
// header in place; otherwise the kept records are written to a temporary file
// renamed over the log. A crash during either leaves a log that replays to the
// same journal.
func (c *Checkpoint) TrimLog(mark int64) error {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if c.log == nil || mark <= logHeaderSize {
		return nil
	}
	if mark >= c.logSize {
		if err := c.log.Truncate(logHeaderSize); err != nil {
			return fmt.Errorf("trim decision log: %w", err)
		}
		c.logSize = logHeaderSize
		return nil
	}
	kept := make([]byte, c.logSize-mark)
	r, err := os.Open(c.LogPath())
	if err == nil {
		_, err = r.ReadAt(kept, mark)
		_ = r.Close()
	}
	if err == nil {
		err = writeVolatile(c.dir, c.LogPath(), append(logHeader(), kept...))
	}
	if err != nil {
		return fmt.Errorf("trim decision log: %w", err)
	}
	_ = c.log.Close()
	c.log = nil
	return c.openLog()
}

// writeVolatile replaces path with data through a temporary file (which Load
// removes) and a rename, without fsync.
func writeVolatile(dir, path string, data []byte) error {
	f, err := os.CreateTemp(dir, tempPrefix+"log-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// loadLog replays the decision log over j. What cannot be replayed is copied to
// the next free checkpoint.log.corrupt-<n> and cut from the log, so the next
// Append follows the last good record; the error is a *LogError.
func (c *Checkpoint) loadLog(j *Journal) error {
	data, err := os.ReadFile(c.LogPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read decision log: %w", err)
	}
	n, err := ReplayLog(j, data)
	if err == nil {
		return nil
	}
	lerr := &LogError{Path: c.LogPath(), Offset: int64(n), Err: err}
	moved, serr := c.setAsideLogTail(data[n:])
	lerr.MovedTo = moved
	if n < logHeaderSize { // no valid header: start the log afresh
		serr = errors.Join(serr, os.Remove(c.LogPath()))
	} else if terr := os.Truncate(c.LogPath(), int64(n)); terr != nil {
		serr = errors.Join(serr, terr)
	}
	if serr != nil {
		return errors.Join(lerr, fmt.Errorf("set aside decision log tail: %w", serr))
	}
	return lerr
}

// setAsideLogTail writes tail to the next free checkpoint.log.corrupt-<n>.
func (c *Checkpoint) setAsideLogTail(tail []byte) (string, error) {
	names, err := c.names()
	if err != nil {
		return "", err
	}
	n := 0
	for _, name := range names {
		if i, err := strconv.Atoi(strings.TrimPrefix(name, logCorruptPrefix)); err == nil && strings.HasPrefix(name, logCorruptPrefix) {
			n = max(n, i)
		}
	}
	to := filepath.Join(c.dir, logCorruptPrefix+strconv.Itoa(n+1))
	return to, os.WriteFile(to, tail, 0o600)
}
