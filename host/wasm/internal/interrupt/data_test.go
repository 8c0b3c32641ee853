package interrupt

import (
	"bytes"
	"context"
	"maps"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// dataSeg encodes an active data segment of memory 0 at offset.
func dataSeg(offset int32, init string) []byte {
	return b([]byte{0x00, opI32Const}, appendS32(nil, offset), []byte{opEnd}, wasmbin.AppendU32(nil, uint32(len(init))), []byte(init))
}

// TestMergeData joins segments whose gaps are at most dataGap zero bytes,
// in offset order, and keeps the others apart.
func TestMergeData(t *testing.T) {
	const a, b = "0123456789abcdefghij", "ABCDEFGHIJKLMNOPQRST" // 20 bytes each
	// "c" ends at 62: a gap of dataGap+1 bytes keeps "z" apart.
	in := vec(dataSeg(40, b), dataSeg(0, a), dataSeg(62+dataGap+1, "z"), dataSeg(61, "c"))
	want := vec(
		dataSeg(0, a+string(make([]byte, 20))+b+"\x00"+"c"),
		dataSeg(62+dataGap+1, "z"),
	)
	if got := mergeData(in, 0); !bytes.Equal(got, want) {
		t.Errorf("mergeData =\n%x, want\n%x", got, want)
	}
}

// TestMergeDataLeavesAlone: a section whose segments could apply
// differently once reordered or joined, or that has nothing to join, is kept
// as it is.
func TestMergeDataLeavesAlone(t *testing.T) {
	for name, payload := range map[string][]byte{
		"overlapping": vec(dataSeg(0, "abcd"), dataSeg(2, "xy")),
		"passive":     vec(dataSeg(0, "ab"), b([]byte{0x01}, wasmbin.AppendU32(nil, 2), []byte("cd"))),
		"global offset": vec(dataSeg(0, "ab"),
			b([]byte{0x00, 0x23, 0x00, opEnd}, wasmbin.AppendU32(nil, 2), []byte("cd"))),
		"memory index":  vec(dataSeg(0, "ab"), b([]byte{0x02, 0x00, opI32Const, 0x04, opEnd}, wasmbin.AppendU32(nil, 2), []byte("cd"))),
		"far apart":     vec(dataSeg(0, "ab"), dataSeg(2+dataGap+1, "cd")),
		"past 4 GiB":    vec(dataSeg(-2, "ab"), dataSeg(-1+dataGap, "cd")),
		"one":           vec(dataSeg(8, "ab")),
		"mostly zeros":  vec(dataSeg(0, ""), dataSeg(dataGap, ""), dataSeg(2*dataGap, ""), dataSeg(3*dataGap, "a")),
		"truncated":     vec(dataSeg(0, "ab"), dataSeg(4, "cd"))[:10],
		"trailing byte": append(vec(dataSeg(0, "ab"), dataSeg(4, "cd")), 0),
	} {
		if got := mergeData(payload, 0); !bytes.Equal(got, payload) {
			t.Errorf("%s: mergeData changed the section:\n%x\nto\n%x", name, payload, got)
		}
	}
}

// TestInstrumentMergesGoData instruments the Go fixture: its tens of
// thousands of data segments become a few, and its memory once instantiated
// (before any code runs) holds the same bytes as the original's.
func TestInstrumentMergesGoData(t *testing.T) {
	out := instrumentFixture(t)
	before, after := dataSegments(t, spinWasm), dataSegments(t, out)
	t.Logf("data segments: %d → %d", before, after)
	if after*100 > before {
		t.Errorf("the instrumented fixture has %d data segments of %d", after, before)
	}
	ctx := context.Background()
	memory := func(module []byte) []byte {
		r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
		defer r.Close(ctx)
		wasi_snapshot_preview1.MustInstantiate(ctx, r)
		providePoll(t, r)
		mod, err := r.InstantiateWithConfig(ctx, module, wazero.NewModuleConfig().WithStartFunctions())
		if err != nil {
			t.Fatal(err)
		}
		mem, ok := mod.Memory().Read(0, mod.Memory().Size())
		if !ok {
			t.Fatal("reading the guest's memory")
		}
		return bytes.Clone(mem)
	}
	if a, b := memory(spinWasm), memory(out); !bytes.Equal(a, b) {
		i := 0
		for i < min(len(a), len(b)) && a[i] == b[i] {
			i++
		}
		t.Errorf("the instrumented module's initial memory differs from the original's (%d and %d bytes) at byte %d", len(a), len(b), i)
	}
}

// dataSegments counts the data segments of module.
func dataSegments(t *testing.T, module []byte) uint32 {
	t.Helper()
	sections, err := wasmbin.Parse(module)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sections {
		if s.ID == wasmbin.SectionData {
			n, err := s.Reader().U32()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

// FuzzMergeData: mergeData never panics, and a section it changes
// initializes the same memory from fewer segments.
func FuzzMergeData(f *testing.F) {
	f.Add(vec(dataSeg(40, "ab"), dataSeg(0, "xy"), dataSeg(43, "c")))
	f.Add(vec(dataSeg(0, "abcd"), dataSeg(2, "xy")))
	f.Add(vec(dataSeg(0, ""), dataSeg(64, ""), dataSeg(129, "z")))
	f.Fuzz(func(t *testing.T, payload []byte) {
		got := mergeData(payload, 0)
		if bytes.Equal(got, payload) {
			return
		}
		before, n := image(t, payload)
		after, m := image(t, got)
		if m >= n {
			t.Fatalf("merged %d segments into %d", n, m)
		}
		if !maps.Equal(before, after) {
			t.Fatalf("the merged section initializes other memory:\n%v\n%v", before, after)
		}
	})
}

// image applies a data section's active segments at i32.const offsets in
// order to a zeroed memory and returns its nonzero bytes by address (two
// memories are equal when these are), and the number of segments; the test
// fails on any other section (mergeData changes no other).
func image(t *testing.T, payload []byte) (map[uint64]byte, int) {
	t.Helper()
	r := wasmbin.NewReader(payload, 0)
	n, err := r.U32()
	if err != nil {
		t.Fatal(err)
	}
	mem := map[uint64]byte{}
	for range n {
		if flags, err := r.U32(); err != nil || flags != 0 {
			t.Fatalf("segment flags %d: %v", flags, err)
		}
		if op, err := r.Byte(); err != nil || op != opI32Const {
			t.Fatalf("offset opcode %#x: %v", op, err)
		}
		off, err := r.S32()
		if err != nil {
			t.Fatal(err)
		}
		if end, err := r.Byte(); err != nil || end != opEnd {
			t.Fatalf("offset end %#x: %v", end, err)
		}
		size, err := r.U32()
		if err != nil {
			t.Fatal(err)
		}
		init, err := r.Bytes(int(size))
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range init {
			at := uint64(uint32(off)) + uint64(i)
			if c == 0 {
				delete(mem, at)
			} else {
				mem[at] = c
			}
		}
	}
	return mem, int(n)
}
