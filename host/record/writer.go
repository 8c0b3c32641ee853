package record

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/resmgr"
)

// Writer records the exchanges it observes. Create it with NewWriter, add it
// to the manager (AddObserver) and run Run.
type Writer struct {
	dir      string
	maxSize  int64
	header   Header
	snapshot func() (*abi.RestoreState, uint64)
	log      logr.Logger
	queue    chan *resmgr.Exchange
	gap      atomic.Bool
	// dropped counts exchanges not recorded (a full queue); handled is the
	// Seq of the last exchange written or skipped.
	dropped atomic.Uint64
	handled atomic.Uint64

	// Owned by Run (and Open before it).
	f       *os.File
	size    int64
	base    uint64  // the current file's header Seq: exchanges up to it are in its snapshot
	next    *Header // the header of the file to start once an exchange passes its Seq
	skipGap bool    // next was taken after a gap: exchanges up to its Seq are not written
}

// NewWriter returns a writer of the record in dir (created if missing), its
// files together bounded by maxSize bytes, each rotated at a quarter of it.
// header is what every file's header says besides its snapshot (node,
// policy, configuration, topology: the topology is required); snapshot
// returns the journal and the Seq of the last exchange it reflects
// (resmgr.Manager.Snapshot).
func NewWriter(dir string, maxSize int64, header Header, snapshot func() (*abi.RestoreState, uint64), opts ...Option) (*Writer, error) {
	switch {
	case dir == "":
		return nil, errors.New("record: directory: empty")
	case maxSize <= 0:
		return nil, fmt.Errorf("record: max size %d: must be positive", maxSize)
	case header.Topology == nil:
		return nil, errors.New("record: header topology: nil")
	case snapshot == nil:
		return nil, errors.New("record: snapshot: nil")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	return &Writer{dir: dir, maxSize: maxSize, header: header, snapshot: snapshot,
		log: o.logger.WithName("record"), queue: make(chan *resmgr.Exchange, o.queue)}, nil
}

// Observe queues an exchange, never waiting; it implements resmgr.Observer.
func (w *Writer) Observe(x *resmgr.Exchange) {
	select {
	case w.queue <- x:
	default:
		w.dropped.Add(1)
		w.gap.Store(true)
	}
}

// Dropped counts the exchanges a full queue kept from the record.
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

// Handled is the Seq of the last exchange the writer wrote (or found in a
// snapshot): how far the record has caught up.
func (w *Writer) Handled() uint64 { return w.handled.Load() }

// Open starts the record's first file from a snapshot taken now. Call it
// after adding the writer to the manager and before Run.
func (w *Writer) Open() error {
	if err := os.MkdirAll(w.dir, 0o700); err != nil {
		return fmt.Errorf("record directory: %w", err)
	}
	w.plan(false)
	if err := w.start(w.next); err != nil {
		return err
	}
	w.next = nil
	return nil
}

// Run writes until ctx ends, then writes what is still queued. A write error
// is logged and the record stops: the agent goes on without it.
func (w *Writer) Run(ctx context.Context) error {
	if w.f == nil {
		if err := w.Open(); err != nil {
			w.log.Error(err, "no record kept", "dir", w.dir)
			return nil
		}
	}
	defer w.close()
	for {
		select {
		case <-ctx.Done():
			for {
				select {
				case x := <-w.queue:
					if err := w.write(x); err != nil {
						w.log.Error(err, "record stopped", "dir", w.dir)
						return nil
					}
				default:
					return nil
				}
			}
		case x := <-w.queue:
			if err := w.write(x); err != nil {
				w.log.Error(err, "record stopped; the agent goes on without it", "dir", w.dir)
				return nil
			}
		}
	}
}

// plan takes a snapshot for the next file.
func (w *Writer) plan(afterGap bool) {
	rs, seq := w.snapshot()
	h := w.header
	h.Restore, h.Seq = rs, seq
	w.next, w.skipGap = &h, afterGap
}

func (w *Writer) write(x *resmgr.Exchange) error {
	defer w.handled.Store(x.Seq)
	if w.gap.Swap(false) {
		w.plan(true)
	}
	if w.next != nil && x.Seq > w.next.Seq { // past the planned snapshot: switch files
		if err := w.start(w.next); err != nil {
			return err
		}
		w.next = nil
	}
	if x.Seq <= w.base || w.next != nil && w.skipGap {
		return nil // a snapshot holds it
	}
	if err := w.append(x); err != nil {
		return err
	}
	if w.next == nil && w.size >= w.maxSize/4 {
		w.plan(false)
	}
	return nil
}

func (w *Writer) append(x *resmgr.Exchange) error {
	rx := &Exchange{Seq: x.Seq, Method: x.Method, Request: x.Request, Response: x.Response}
	if x.Err != nil && x.Response == nil {
		rx.Error = x.Err.Error()
	}
	b, err := encodeExchange(rx)
	if err != nil {
		return err
	}
	n, err := w.f.Write(b)
	w.size += int64(n)
	return err
}

// start closes the current file and starts one with header h, then deletes
// the oldest files past MaxSize.
func (w *Writer) start(h *Header) error {
	w.close()
	b, err := encodeHeader(h)
	if err != nil {
		return err
	}
	path := filepath.Join(w.dir, fmt.Sprintf("record-%020d.nrr", h.Seq+1))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("start record file: %w", err)
	}
	w.f, w.size, w.base = f, 0, h.Seq
	n, err := f.Write(b)
	w.size += int64(n)
	if err != nil {
		return fmt.Errorf("write record header %s: %w", path, err)
	}
	return w.trim(path)
}

// trim deletes the oldest files while all together pass MaxSize, never the
// current one.
func (w *Writer) trim(current string) error {
	files, err := Files(w.dir)
	if err != nil {
		return err
	}
	var total int64
	sizes := make([]int64, len(files))
	for i, p := range files {
		if fi, err := os.Stat(p); err == nil {
			sizes[i] = fi.Size()
			total += fi.Size()
		}
	}
	for i, p := range files {
		if total <= w.maxSize || p == current {
			break
		}
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("delete old record file: %w", err)
		}
		total -= sizes[i]
	}
	return nil
}

func (w *Writer) close() {
	if w.f != nil {
		if err := w.f.Close(); err != nil {
			w.log.Error(err, "closing a record file")
		}
		w.f = nil
	}
}

// Files lists a record directory's files, oldest first.
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read record directory: %w", err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "record-") && strings.HasSuffix(e.Name(), ".nrr") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}
