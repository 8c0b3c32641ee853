package record

import (
	"encoding/binary"
	"fmt"
	"os"
)

// File is one record file read back.
type File struct {
	Path      string
	Header    *Header
	Exchanges []*Exchange
	// Torn is set when the file ends in a partial frame (a crash while
	// writing); what comes before it is read.
	Torn bool
}

// Read reads a record: a directory (every file, oldest first) or one file.
func Read(path string) ([]*File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read record: %w", err)
	}
	paths := []string{path}
	if fi.IsDir() {
		if paths, err = Files(path); err != nil {
			return nil, err
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("read record: %s holds no record-*.nrr file", path)
		}
	}
	var out []*File
	for _, p := range paths {
		f, err := readFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func readFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read record: %w", err)
	}
	return parseFile(path, data)
}

// parseFile decodes one record file's bytes; path names it in errors.
func parseFile(path string, data []byte) (*File, error) {
	f := &File{Path: path}
	for off := 0; off < len(data); {
		n, k := binary.Uvarint(data[off:])
		if k <= 0 || uint64(len(data)-off-k) < n {
			f.Torn = true
			break
		}
		h, x, err := decodeFrame(data[off+k : off+k+int(n)])
		if err != nil {
			return nil, fmt.Errorf("record %s at byte %d: %w", path, off, err)
		}
		switch {
		case off == 0 && h == nil:
			return nil, fmt.Errorf("record %s: does not start with a header (not a record file?)", path)
		case h != nil && off == 0:
			f.Header = h
		case x != nil:
			f.Exchanges = append(f.Exchanges, x)
		default:
			return nil, fmt.Errorf("record %s at byte %d: a frame that is neither a header nor an exchange", path, off)
		}
		off += k + int(n)
	}
	if f.Header == nil {
		return nil, fmt.Errorf("record %s: empty", path)
	}
	return f, nil
}
