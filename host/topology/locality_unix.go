//go:build unix

package topology

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// deviceOf returns the device behind path: the device itself for a device
// node, else the block device holding its file system. ok is false when path
// does not exist or lives on a virtual file system (major 0: tmpfs, overlay).
func deviceOf(path string) (typ string, major, minor int64, ok bool, err error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOENT) {
			return "", 0, 0, false, nil
		}
		return "", 0, 0, false, fmt.Errorf("topology: stat %s: %w", path, err)
	}
	dev, typ := uint64(st.Dev), "b"
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		dev = uint64(st.Rdev)
	case unix.S_IFCHR:
		dev, typ = uint64(st.Rdev), "c"
	}
	maj, mnr := int64(unix.Major(dev)), int64(unix.Minor(dev))
	if maj == 0 {
		return "", 0, 0, false, nil
	}
	return typ, maj, mnr, true, nil
}
