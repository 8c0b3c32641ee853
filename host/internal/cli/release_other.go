//go:build !linux

package cli

// releaseExecutable releases nothing where /proc/self/smaps does not exist.
func releaseExecutable() (int64, error) { return 0, nil }
