//go:build unix

package topology

import (
	"io/fs"
	"sync"
	"syscall"
)

// readBufSize exceeds any sysfs attribute: the kernel formats one into a
// page (4 KiB) and returns all of it from the first read.
const readBufSize = 8 << 10

var readBufs = sync.Pool{New: func() any { b := make([]byte, readBufSize); return &b }}

// readFile reads a small file with plain system calls: open, read, close.
// os.ReadFile costs three more per file (an fstat, an epoll registration
// that fails for regular files, and a read that returns 0), which adds up
// over the ~20 files of each of thousands of CPUs. A read shorter than the
// buffer is taken as the whole file, which holds for sysfs attributes and
// for small regular files; longer files are read to EOF.
func readFile(path string) (string, error) {
	fd, err := retry(func() (int, error) { return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0) })
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	var out []byte
	for {
		n, err := retry(func() (int, error) { return syscall.Read(fd, buf) })
		if err != nil {
			return "", &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if out == nil && n < len(buf) {
			return string(buf[:n]), nil
		}
		out = append(out, buf[:n]...)
		if n == 0 {
			return string(out), nil
		}
	}
}

// retry repeats a system call interrupted by a signal.
func retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != syscall.EINTR {
			return n, err
		}
	}
}
