package wasm

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// mmapAllocator backs each linear memory with one anonymous mapping of the
// memory limit, reserved up front and committed by the kernel page by page as
// the guest touches it. Growing never copies and instantiation never clears
// memory; wazero's default allocator does both, which made a guest that grows to
// a 64 MiB limit spend seconds copying before it could fail.
type mmapAllocator struct{}

func (mmapAllocator) Allocate(initial, max uint64) experimental.LinearMemory {
	buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		// A reservation the kernel refuses (ulimit -v, say) must not take the
		// agent down: fall back to memory in the Go heap, grown by copying.
		return &heapMemory{buf: make([]byte, 0, initial)}
	}
	// Fault the initial pages in with one call rather than one page fault at a
	// time while wazero copies the data segments (several times faster in a VM).
	// Kernels before 5.14 lack MADV_POPULATE_WRITE; the pages then fault lazily.
	_ = syscall.Madvise(buf[:min(initial, max)], madvPopulateWrite)
	return &mmapMemory{buf: buf}
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 23

type mmapMemory struct{ buf []byte }

func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size]
}

func (m *mmapMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf = nil
	}
}

// heapMemory is linear memory in the Go heap, for when a reservation fails.
type heapMemory struct{ buf []byte }

func (m *heapMemory) Reallocate(size uint64) []byte {
	if size > uint64(cap(m.buf)) {
		grown := make([]byte, size, max(size, 2*uint64(cap(m.buf))))
		copy(grown, m.buf)
		m.buf = grown
	}
	m.buf = m.buf[:size]
	return m.buf
}

func (m *heapMemory) Free() { m.buf = nil }

// memoryAllocator is the allocator instantiate passes to wazero.
var memoryAllocator experimental.MemoryAllocator = mmapAllocator{}
