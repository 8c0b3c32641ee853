package builtin

import (
	"encoding/binary"
	"os"
	"testing"
	"unsafe"
)

// presentPages counts the pages of s mapped into this process (bit 63 of
// each page's entry in /proc/self/pagemap).
func presentPages(t *testing.T, s string) (present, total int) {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	first, last := (start+page-1)/page, (start+uintptr(len(s)))/page
	buf := make([]byte, 8*(last-first))
	if _, err := f.ReadAt(buf, int64(first*8)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:])&(1<<63) != 0 {
			present++
		}
	}
	return present, len(buf) / 8
}

// held keeps Module's answer reachable, as the agent does (and so copied).
var held []byte

// TestModuleReleasesItsPages: once Module copied a module out of the binary,
// the executable's pages it read are no longer this process's resident
// memory.
func TestModuleReleasesItsPages(t *testing.T) {
	for name, s := range modules {
		data, ok := Module(name)
		held = data
		if !ok || len(data) != len(*s) {
			t.Fatalf("Module(%q) does not answer the embedded module", name)
		}
		present, total := presentPages(t, *s)
		t.Logf("%s: %d of %d pages resident after Module", name, present, total)
		if present > total/20 {
			t.Errorf("%s: %d of the module's %d pages still resident after Module", name, present, total)
		}
		if string(data) != *s {
			t.Fatalf("Module(%q) does not answer the embedded module", name)
		}
	}
}
