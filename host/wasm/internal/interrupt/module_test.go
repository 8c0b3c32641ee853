package interrupt

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// vec encodes a vector: the number of items, then the items.
func vec(items ...[]byte) []byte {
	return b(wasmbin.AppendU32(nil, uint32(len(items))), bytes.Join(items, nil))
}

// str encodes a name.
func str(s string) []byte { return wasmbin.AppendName(nil, s) }

// sec encodes a section.
func sec(id byte, payload ...[]byte) []byte {
	p := bytes.Join(payload, nil)
	return b([]byte{id}, wasmbin.AppendU32(nil, uint32(len(p))), p)
}

// custom encodes a custom section.
func custom(name string, data []byte) []byte { return sec(wasmbin.SectionCustom, str(name), data) }

// body encodes a function body without locals.
func body(code ...byte) []byte {
	p := b([]byte{0x00}, code)
	return b(wasmbin.AppendU32(nil, uint32(len(p))), p)
}

// wasm assembles a module from sections.
func wasm(sections ...[]byte) []byte { return b([]byte(wasmbin.Header), bytes.Join(sections, nil)) }

// countdown is a function (param i32) (result i32) that loops until its
// parameter is zero, then returns 7.
var countdown = body(
	0x02, 0x40, // block
	0x03, 0x40, // loop
	0x20, 0x00, 0x45, 0x0d, 0x01, // local.get 0; i32.eqz; br_if 1
	0x20, 0x00, 0x41, 0x01, 0x6b, 0x21, 0x00, // local.set 0 (local.get 0 - 1)
	0x0c, 0x00, // br 0
	0x0b, 0x0b, // end end
	0x41, 0x07, 0x0b, // i32.const 7; end
)

// nameSection is a "name" custom section payload naming function 0.
var nameSection = func() []byte {
	names := vec(b([]byte{0x00}, str("countdown")))
	return b([]byte{0x01}, wasmbin.AppendU32(nil, uint32(len(names))), names)
}()

var funcType = sec(wasmbin.SectionType, vec([]byte{0x60, 0x01, 0x7f, 0x01, 0x7f}))

// TestNoGlobalNoExport instruments a module that has neither a global nor an
// export section, so both are created in place.
func TestNoGlobalNoExport(t *testing.T) {
	in := wasm(funcType, sec(wasmbin.SectionFunction, vec([]byte{0x00})), sec(wasmbin.SectionCode, vec(countdown)), custom("name", nameSection))
	out, loops, err := Instrument(in)
	if err != nil {
		t.Fatal(err)
	}
	if loops != 1 {
		t.Errorf("loops = %d, want 1", loops)
	}
	ids := sectionIDs(t, out)
	if want := []byte{wasmbin.SectionType, wasmbin.SectionImport, wasmbin.SectionFunction, wasmbin.SectionGlobal, wasmbin.SectionExport, wasmbin.SectionCode, wasmbin.SectionCustom}; !bytes.Equal(ids, want) {
		t.Errorf("section ids = %v, want %v", ids, want)
	}
	mod := instantiate(t, out)
	countdown := mod.ExportedGlobal(GlobalName)
	if countdown == nil {
		t.Fatal("countdown global not exported")
	}
	if _, ok := countdown.(api.MutableGlobal); !ok || countdown.Type() != api.ValueTypeI32 || countdown.Get() != Countdown {
		t.Fatalf("countdown global: mutable %v, type %v, value %d", ok, countdown.Type(), countdown.Get())
	}
}

// TestImportedGlobal checks the flag index counts imported and defined
// globals, and that the check stops a loop and leaves it alone otherwise.
func TestImportedGlobal(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer r.Close(ctx)
	// Module "env" exports an immutable i32 global "g".
	env := wasm(
		sec(wasmbin.SectionGlobal, vec([]byte{0x7f, 0x00, 0x41, 0x05, 0x0b})),
		sec(wasmbin.SectionExport, vec(b(str("g"), []byte{kindGlobal, 0x00}))),
	)
	if _, err := r.InstantiateWithConfig(ctx, env, wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	poll := providePoll(t, r)
	in := wasm(
		funcType,
		sec(wasmbin.SectionImport, vec(b(str("env"), str("g"), []byte{kindGlobal, 0x7f, 0x00}))),
		sec(wasmbin.SectionFunction, vec([]byte{0x00})),
		sec(wasmbin.SectionMemory, vec([]byte{0x00, 0x01})),
		sec(wasmbin.SectionGlobal, vec([]byte{0x7e, 0x01, 0x42, 0x00, 0x0b})),
		sec(wasmbin.SectionExport, vec(b(str("run"), []byte{kindFunc, 0x00}))),
		custom(".debug_info", []byte{0xde, 0xad}),
		sec(wasmbin.SectionCode, vec(countdown)),
		custom("nriwasm.metadata", []byte("keep me")),
	)
	out, loops, err := Instrument(in)
	if err != nil {
		t.Fatal(err)
	}
	if loops != 1 {
		t.Errorf("loops = %d, want 1", loops)
	}
	if bytes.Contains(out, []byte(".debug_info")) {
		t.Error(".debug_info section kept")
	}
	if !bytes.HasSuffix(out, custom("nriwasm.metadata", []byte("keep me"))) {
		t.Error("custom section nriwasm.metadata not kept in place")
	}
	if !bytes.Contains(out, appendCheck(nil, 2, 0)) {
		t.Error("check does not use global 2 and function 0")
	}
	mod, err := r.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	run := mod.ExportedFunction("run")
	res, err := run.Call(ctx, 1000)
	if err != nil || res[0] != 7 {
		t.Fatalf("run(1000) = %v, %v; want 7", res, err)
	}
	if _, err := run.Call(ctx, 3*Countdown); err != nil || poll.polls.Load() < 2 {
		t.Fatalf("run(%d): %v after %d polls, want 2 or more", 3*Countdown, err, poll.polls.Load())
	}
	poll.stop.Store(true)
	mod.ExportedGlobal(GlobalName).(api.MutableGlobal).Set(0)
	if _, err := run.Call(ctx, 1000); !errors.Is(err, errStopped) {
		t.Fatalf("run once stopped: error = %v, want %v", err, errStopped)
	}
}

func TestInstrumentErrors(t *testing.T) {
	code := func(bodies ...[]byte) []byte { return sec(wasmbin.SectionCode, vec(bodies...)) }
	fn := sec(wasmbin.SectionFunction, vec([]byte{0x00}))
	tests := []struct {
		name    string
		module  []byte
		want    error
		message string
	}{
		{"empty", nil, wasmbin.ErrTruncated, "header"},
		{"duplicate export", wasm(sec(wasmbin.SectionExport, vec(b(str(GlobalName), []byte{kindFunc, 0x00})))), errExportExists, GlobalName},
		{"already imports poll", wasm(sec(wasmbin.SectionImport, vec(b(str(PollModule), str(PollName), []byte{kindFunc, 0x00})))), errImportExists, PollName},
		{"GC type", wasm(sec(wasmbin.SectionType, vec([]byte{0x5f, 0x00}))), errUnsupported, "type form 0x5f"},
		{"bad import kind", wasm(sec(wasmbin.SectionImport, vec(b(str("a"), str("b"), []byte{0x07})))), wasmbin.ErrMalformed, "import kind 0x07"},
		{"unsupported opcode", wasm(funcType,
			sec(wasmbin.SectionImport, vec(b(str("a"), str("b"), []byte{kindFunc, 0x00}))),
			fn, code(body(0x01, 0x0b), body(0x01, 0xfb, 0x00, 0x0b))),
			errUnsupported, "unsupported opcode 0xfb at offset 39 in function 2"},
		{"truncated body", wasm(funcType, fn, code(body(0x41))), wasmbin.ErrTruncated, "function 0"},
		{"body without end", wasm(funcType, fn, code(body(0x01))), wasmbin.ErrMalformed, "end instruction"},
		{"trailing code bytes", wasm(funcType, fn, sec(wasmbin.SectionCode, vec(body(0x0b)), []byte{0x00})), wasmbin.ErrMalformed, "trailing"},
		{"bad locals", wasm(funcType, fn, code([]byte{0x03, 0x01, 0x01, 0x05})), wasmbin.ErrMalformed, "locals entry 0"},
		{"bad custom name", wasm(sec(wasmbin.SectionCustom, []byte{0x05})), wasmbin.ErrTruncated, "custom section name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Instrument(tt.module)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
			if out != nil {
				t.Error("output returned with an error")
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("error %q does not contain %q", err, tt.message)
			}
		})
	}
}

// sectionIDs returns the section ids of a module.
func sectionIDs(t *testing.T, module []byte) []byte {
	t.Helper()
	secs, err := wasmbin.Parse(module)
	if err != nil {
		t.Fatal(err)
	}
	var ids []byte
	for _, s := range secs {
		ids = append(ids, s.ID)
	}
	return ids
}

// instantiate compiles and instantiates module in a fresh compiler runtime.
func instantiate(t *testing.T, module []byte) api.Module {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	t.Cleanup(func() { r.Close(ctx) })
	providePoll(t, r)
	mod, err := r.Instantiate(ctx, module)
	if err != nil {
		t.Fatal(err)
	}
	return mod
}
