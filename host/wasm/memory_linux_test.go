package wasm

import "testing"

func TestLinearMemoryGrowsInPlaceAndFallsBack(t *testing.T) {
	const limit = 1 << 20
	for name, mem := range map[string]interface {
		Reallocate(uint64) []byte
		Free()
	}{
		"mmap": mmapAllocator{}.Allocate(64<<10, limit),
		"heap": &heapMemory{},
	} {
		t.Run(name, func(t *testing.T) {
			defer mem.Free()
			buf := mem.Reallocate(64 << 10)
			buf[100] = 42
			grown := mem.Reallocate(limit)
			if len(grown) != limit || grown[100] != 42 {
				t.Fatalf("grown memory: len %d, byte 100 = %d; want %d and 42", len(grown), grown[100], limit)
			}
			if _, ok := mem.(*mmapMemory); ok && &grown[0] != &buf[0] {
				t.Fatal("mmap-backed memory moved while growing")
			}
		})
	}
	m := mmapAllocator{}.Allocate(0, limit)
	defer m.Free()
	if got := m.Reallocate(limit + 1); got != nil {
		t.Fatalf("growing past the reservation returned %d bytes, want nil", len(got))
	}
}
