package interrupt

import (
	"bytes"
	"context"
	"testing"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// u32 encodes a u32.
func u32(v uint32) []byte { return wasmbin.AppendU32(nil, v) }

// renumberModule builds a module that refers to functions in every place an
// index can appear, with function index i written as fn(i). If instrumented,
// it holds what Instrument adds: the poll import, the countdown and its export.
// Functions: 0 imports env.f () -> i32; 1 "a" calls 2; 2 returns f() + 2 and
// takes ref.func 1; 3 is the start function. A declarative element segment
// and the name section also refer to function far, which need not exist.
func renumberModule(fn func(uint32) uint32, instrumented bool, far uint32) []byte {
	imports := [][]byte{b(str("env"), str("f"), []byte{kindFunc, 0x00})}
	globals := [][]byte{b([]byte{0x70, 0x00, opRefFunc}, u32(fn(2)), []byte{opEnd})}
	exports := [][]byte{
		b(str("a"), []byte{kindFunc}, u32(fn(1))),
		b(str("g"), []byte{kindGlobal, 0x00}),
		b(str("f"), []byte{kindFunc}, u32(fn(0))),
	}
	if instrumented {
		imports = append(imports, b(str(PollModule), str(PollName), []byte{kindFunc, 0x01}))
		globals = append(globals, countdownInit)
		exports = append(exports, b(str(GlobalName), []byte{kindGlobal, 0x01}))
	}
	ref := func(i uint32) []byte { return b([]byte{opRefFunc}, u32(fn(i)), []byte{opEnd}) }
	offset := func(v byte) []byte { return []byte{opI32Const, v, opEnd} }
	elements := vec(
		b([]byte{0x00}, offset(0), vec(u32(fn(1)), u32(fn(2)))),
		b([]byte{0x01, 0x00}, vec(u32(fn(3)))),
		b([]byte{0x02, 0x00}, offset(2), []byte{0x00}, vec(u32(fn(0)), u32(fn(1)))),
		b([]byte{0x03, 0x00}, vec(u32(fn(2)))),
		b([]byte{0x04}, offset(3), vec(ref(3))),
		b([]byte{0x05, 0x70}, vec(ref(1), []byte{0xd0, 0x70, opEnd})),
		b([]byte{0x06, 0x00}, offset(0), []byte{0x70}, vec(ref(2))),
		b([]byte{0x07, 0x70}, vec(ref(far))),
	)
	names := func(id byte, entries ...[]byte) []byte {
		v := vec(entries...)
		return b([]byte{id}, u32(uint32(len(v))), v)
	}
	name := b(
		names(0x00)[:1], u32(2), str("m"), // module name, not a vector
		names(0x01, b(u32(fn(0)), str("f")), b(u32(fn(1)), str("a")), b(u32(fn(2)), str("b")), b(u32(fn(far)), str("far"))),
		names(0x02, b(u32(fn(1)), vec(b(u32(0), str("x"))))),
		names(0x03, b(u32(fn(2)), vec(b(u32(0), str("L"))))),
		names(0x07, b(u32(0), str("g"))),
	)
	return wasm(
		sec(wasmbin.SectionType, vec([]byte{0x60, 0x00, 0x01, 0x7f}, []byte{0x60, 0x00, 0x00})),
		sec(wasmbin.SectionImport, vec(imports...)),
		sec(wasmbin.SectionFunction, vec([]byte{0x00}, []byte{0x00}, []byte{0x01})),
		sec(wasmbin.SectionTable, vec([]byte{0x70, 0x00, 0x04})),
		sec(wasmbin.SectionGlobal, vec(globals...)),
		sec(wasmbin.SectionExport, vec(exports...)),
		sec(wasmbin.SectionStart, u32(fn(3))),
		sec(wasmbin.SectionElement, elements),
		sec(wasmbin.SectionCode, vec(
			body(b([]byte{opCall}, u32(fn(2)), []byte{opEnd})...),
			body(b([]byte{opRefFunc}, u32(fn(1)), []byte{0x1a, opCall}, u32(fn(0)), []byte{opI32Const, 0x02, 0x6a, opEnd})...),
			body(0x01, opEnd),
		)),
		custom("name", name),
	)
}

func TestRenumber(t *testing.T) {
	same := func(i uint32) uint32 { return i }
	shifted := func(i uint32) uint32 {
		if i >= 1 {
			return i + 1
		}
		return i
	}
	// Index 127 takes two bytes once shifted.
	for _, far := range []uint32{127, 3} {
		out, loops, err := Instrument(renumberModule(same, false, far))
		if err != nil {
			t.Fatal(err)
		}
		if want := renumberModule(shifted, true, far); loops != 0 || !bytes.Equal(out, want) {
			t.Fatalf("Instrument =\n% x\nwant\n% x", out, want)
		}
	}
	out, _, err := Instrument(renumberModule(same, false, 3))
	if err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer r.Close(ctx)
	providePoll(t, r)
	f := api.GoFunc(func(_ context.Context, stack []uint64) { stack[0] = 40 })
	if _, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().WithGoFunction(f, nil, []api.ValueType{api.ValueTypeI32}).Export("f").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := r.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := mod.ExportedFunction("a").Call(ctx); err != nil || res[0] != 42 {
		t.Fatalf("a() = %v, %v; want 42", res, err)
	}
}

func TestPollTypeAppended(t *testing.T) {
	in := wasm(funcType, sec(wasmbin.SectionFunction, vec([]byte{0x00})), sec(wasmbin.SectionCode, vec(countdown)))
	out, _, err := Instrument(in)
	if err != nil {
		t.Fatal(err)
	}
	want := sec(wasmbin.SectionType, vec([]byte{0x60, 0x01, 0x7f, 0x01, 0x7f}, []byte{0x60, 0x00, 0x00}))
	wantImport := sec(wasmbin.SectionImport, vec(b(str(PollModule), str(PollName), []byte{kindFunc, 0x01})))
	if !bytes.Contains(out, b(want, wantImport)) {
		t.Fatalf("no () -> () type appended and imported:\n% x", out)
	}
}

func TestMalformedNameSectionDropped(t *testing.T) {
	in := wasm(funcType, sec(wasmbin.SectionFunction, vec([]byte{0x00})), sec(wasmbin.SectionCode, vec(countdown)),
		custom("name", []byte{0x01, 0x05, 0x01, 0x00}), custom("other", []byte{0x01}))
	out, _, err := Instrument(in)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, str("name")) || !bytes.HasSuffix(out, custom("other", []byte{0x01})) {
		t.Fatalf("malformed name section kept or other custom section lost:\n% x", out)
	}
}
