package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// File names in the state directory.
const (
	// FileName is the checkpoint's name in its directory.
	FileName = "checkpoint"
	// tempPrefix names the temporary files Save writes before renaming them.
	tempPrefix = FileName + ".tmp-"
	// corruptPrefix names checkpoints Load set aside: checkpoint.corrupt-1, -2, …
	corruptPrefix = FileName + ".corrupt-"
)

// Checkpoint is the journal's file in a state directory. Only one process may use
// a directory at a time, and a Checkpoint's methods must not run concurrently.
type Checkpoint struct {
	dir string
	buf []byte // reused by Save
	// The decision log, open for appending; logMu serializes Append, LogMark
	// and TrimLog, which may run while Save writes.
	logMu   sync.Mutex
	log     *os.File
	logSize int64
}

// NewCheckpoint returns the checkpoint kept in dir. Nothing is read or created
// until Load or Save.
func NewCheckpoint(dir string) *Checkpoint {
	return &Checkpoint{dir: dir}
}

// Path returns the checkpoint file's path.
func (c *Checkpoint) Path() string { return filepath.Join(c.dir, FileName) }

// CorruptError reports a checkpoint Load could not trust and set aside.
type CorruptError struct {
	Path    string // the checkpoint file
	MovedTo string // where it is now
	Err     error  // why: a *FormatError, or the read error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("checkpoint %s set aside as %s: %v", e.Path, filepath.Base(e.MovedTo), e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Load is NewCheckpoint(dir).Load().
func Load(dir string) (*Journal, error) { return NewCheckpoint(dir).Load() }

// Load reads the checkpoint, then replays the decision log over it (see
// AppendDelta). The journal it returns is never nil: the agent logs a non-nil
// error and carries on with that journal, starting from what the runtime
// reports. Load first removes temporary files an interrupted Save left.
//
//   - No checkpoint (or no directory): an empty journal and nil.
//   - A checkpoint that fails its checks (see FormatError) or cannot be read:
//     the file is renamed to checkpoint.corrupt-<n>, n one more than the
//     highest already there, and an empty journal comes with a *CorruptError.
//   - A checkpoint that cannot be set aside: an empty journal and the errors;
//     a later Save replaces the file.
//   - A decision log with a torn or corrupt tail (a crash mid-append): the
//     records before it are replayed, the tail is copied to
//     checkpoint.log.corrupt-<n> and cut from the log, and a *LogError says
//     so. Over a checkpoint set aside, the log is replayed over the empty
//     journal: the containers it names keep their assignments.
func (c *Checkpoint) Load() (*Journal, error) {
	closeErr := c.CloseLog() // the next Append opens the log Load leaves
	j, err := c.loadCheckpoint()
	return j, join(err, c.loadLog(j), closeErr)
}

// loadCheckpoint is Load without the decision log.
func (c *Checkpoint) loadCheckpoint() (*Journal, error) {
	cleanErr := c.removeTemps()
	data, err := os.ReadFile(c.Path())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return New(), cleanErr
	case err != nil:
		// Set it aside too: the next Save must not replace what may still be
		// read by hand.
		err = fmt.Errorf("read checkpoint: %w", err)
	default:
		var j *Journal
		if j, err = Unmarshal(data); err == nil {
			return j, cleanErr
		}
	}
	moved, renameErr := c.setAside()
	if renameErr != nil {
		return New(), join(fmt.Errorf("checkpoint %s: %w", c.Path(), err), renameErr, cleanErr)
	}
	return New(), join(&CorruptError{Path: c.Path(), MovedTo: moved, Err: err}, cleanErr)
}

// join is errors.Join, except that a single error comes back as itself.
func join(errs ...error) error {
	var nonNil []error
	for _, err := range errs {
		if err != nil {
			nonNil = append(nonNil, err)
		}
	}
	if len(nonNil) == 1 {
		return nonNil[0]
	}
	return errors.Join(nonNil...)
}

// removeTemps removes what interrupted Saves left behind.
func (c *Checkpoint) removeTemps() error {
	names, err := c.names()
	var errs []error
	for _, name := range names {
		if strings.HasPrefix(name, tempPrefix) {
			if err := os.Remove(filepath.Join(c.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove stale temporary checkpoint: %w", err))
			}
		}
	}
	return join(append(errs, err)...)
}

// setAside renames the checkpoint to the next free checkpoint.corrupt-<n>.
func (c *Checkpoint) setAside() (string, error) {
	names, err := c.names()
	if err != nil {
		return "", err
	}
	n := 0
	for _, name := range names {
		if i, err := strconv.Atoi(strings.TrimPrefix(name, corruptPrefix)); err == nil && strings.HasPrefix(name, corruptPrefix) {
			n = max(n, i)
		}
	}
	to := filepath.Join(c.dir, corruptPrefix+strconv.Itoa(n+1))
	if err := os.Rename(c.Path(), to); err != nil {
		return "", fmt.Errorf("set aside corrupt checkpoint: %w", err)
	}
	return to, syncDir(c.dir)
}

// names lists the state directory; a missing directory is empty.
func (c *Checkpoint) names() ([]string, error) {
	entries, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list state directory: %w", err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}
