package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Save writes j to the checkpoint atomically: a temporary file in the same
// directory is written and synced, then renamed over the checkpoint, and the
// directory is synced. A crash at any point leaves either the old checkpoint or
// the new one, never a mix; Load removes the temporary file. The directory is
// created (mode 0700) if missing; the file is private (mode 0600).
func (c *Checkpoint) Save(j *Journal) error {
	data, err := Marshal(c.buf[:0], j)
	if err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	c.buf = data
	return c.SaveEncoded(data)
}

// SaveEncoded writes a journal Marshal already encoded, the same way as Save.
// It lets a caller encode under its lock and write outside it.
func (c *Checkpoint) SaveEncoded(data []byte) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	if err := writeAtomic(c.dir, c.Path(), data); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	return nil
}

func writeAtomic(dir, path string, data []byte) error {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// PolicyFileName is the name, in the state directory, of the record of the
// policy module the journal's assignments come from (host/resmgr writes it
// at start and after a live swap).
const PolicyFileName = "policy.json"

// SavePolicy writes data as the state directory's policy record, atomically
// as Save does.
func (c *Checkpoint) SavePolicy(data []byte) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("save policy record: %w", err)
	}
	if err := writeAtomic(c.dir, filepath.Join(c.dir, PolicyFileName), data); err != nil {
		return fmt.Errorf("save policy record: %w", err)
	}
	return nil
}

// LoadPolicy reads the state directory's policy record: nil, and no error,
// when there is none.
func (c *Checkpoint) LoadPolicy() ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(c.dir, PolicyFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read policy record: %w", err)
	}
	return data, nil
}
