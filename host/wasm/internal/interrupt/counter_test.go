package interrupt

import "github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"

// counterModule is a hand-assembled module whose export "spin" loops forever,
// adding one to the exported mutable i64 global "iters" at every iteration:
//
//	(global $iters (export "iters") (mut i64) (i64.const 0))
//	(func (export "spin") (loop global.get 0 i64.const 1 i64.add global.set 0 br 0))
func counterModule() []byte {
	sections := []wasmbin.Section{
		{ID: wasmbin.SectionType, Payload: []byte{1, 0x60, 0, 0}},
		{ID: wasmbin.SectionFunction, Payload: []byte{1, 0}},
		{ID: wasmbin.SectionGlobal, Payload: []byte{1, 0x7e, 1, 0x42, 0, 0x0b}},
		{ID: wasmbin.SectionExport, Payload: append(append(
			append(wasmbin.AppendName([]byte{2}, "spin"), 0x00, 0),
			wasmbin.AppendName(nil, "iters")...), 0x03, 0)},
	}
	body := []byte{0, 0x03, 0x40, 0x23, 0, 0x42, 1, 0x7c, 0x24, 0, 0x0c, 0, 0x0b, 0x0b}
	code := append(wasmbin.AppendU32([]byte{1}, uint32(len(body))), body...)
	sections = append(sections, wasmbin.Section{ID: wasmbin.SectionCode, Payload: code})
	return wasmbin.Encode(sections, 64)
}
