package interrupt

import "github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"

// counterModule is a hand-assembled module whose export "spin" loops forever,
// adding one at every iteration to the i64 at address 0 of its exported
// memory:
//
//	(memory (export "memory") 1)
//	(func (export "spin")
//	  (loop i32.const 0 i32.const 0 i64.load i64.const 1 i64.add i64.store br 0))
//
// The count lives in memory, not in a global, so that the host can read it
// with one atomic load while the guest runs (see hammer_test.go).
func counterModule() []byte {
	exports := wasmbin.AppendName([]byte{2}, "spin")
	exports = append(exports, 0x00, 0) // func 0
	exports = wasmbin.AppendName(exports, "memory")
	exports = append(exports, 0x02, 0) // memory 0
	sections := []wasmbin.Section{
		{ID: wasmbin.SectionType, Payload: []byte{1, 0x60, 0, 0}},
		{ID: wasmbin.SectionFunction, Payload: []byte{1, 0}},
		{ID: wasmbin.SectionMemory, Payload: []byte{1, 0, 1}},
		{ID: wasmbin.SectionExport, Payload: exports},
	}
	body := []byte{
		0,          // no locals
		0x03, 0x40, // loop
		0x41, 0, 0x41, 0, // i32.const 0 ×2
		0x29, 3, 0, // i64.load align=8 offset=0
		0x42, 1, 0x7c, // i64.const 1; i64.add
		0x37, 3, 0, // i64.store align=8 offset=0
		0x0c, 0, // br 0
		0x0b, 0x0b, // end loop; end func
	}
	code := append(wasmbin.AppendU32([]byte{1}, uint32(len(body))), body...)
	sections = append(sections, wasmbin.Section{ID: wasmbin.SectionCode, Payload: code})
	return wasmbin.Encode(sections, 64)
}
