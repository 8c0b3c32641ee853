// Package interrupt rewrites a WebAssembly binary module so that the host can
// stop a runaway call cheaply.
//
// wazero's RuntimeConfig.WithCloseOnContextDone makes the compiler insert a
// call into the runtime at every loop header, which slows Go-compiled guests
// down several times. Instrument instead adds a mutable i32 global, exported
// as GlobalName, and inserts after every loop header a check of it:
//
//	global.get $flag
//	if
//	  unreachable
//	end
//
// A host stops a call by setting the exported global to a non-zero value (for
// example with api.MutableGlobal.Set(1) in wazero); the guest traps at its
// next loop iteration. Code that runs no loop (straight-line code, host
// calls) is not interrupted by the check.
//
// The rewriter decodes every instruction of every function body, so that no
// immediate byte is mistaken for an opcode; it fails on opcodes it does not
// know rather than emit a corrupt module. Custom sections are kept except
// DWARF ones (".debug_*"), whose code offsets the rewrite invalidates.
package interrupt

import (
	"fmt"
	"strings"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// GlobalName is the export name of the interrupt flag global.
const GlobalName = "nriwasm_interrupt"

// Instrument returns a copy of module in which every `loop` instruction of every function body
// is followed by a check of a new mutable i32 global, exported as GlobalName, initialised to 0:
//
//	global.get $flag ; if (blocktype empty 0x40) ; unreachable ; end
//
// so that setting the global to a non-zero value from the host makes the running call trap
// at the next loop iteration. It also returns the number of loops instrumented.
//
// The new global takes the last index of the global index space, so no
// existing index changes. Instrument fails if the module already exports
// GlobalName (for instance because it was already instrumented), if it is
// malformed or truncated, or if a function body uses an opcode the decoder
// does not know; errors name the byte offset in module and the function
// index.
func Instrument(module []byte) ([]byte, int, error) {
	sections, err := wasmbin.Parse(module)
	if err != nil {
		return nil, 0, fmt.Errorf("interrupt: %w", err)
	}

	var imports importCounts
	kept := sections[:0:0]
	for _, s := range sections {
		debug, err := isDebugSection(s)
		if err != nil {
			return nil, 0, fmt.Errorf("interrupt: section at offset %d: %w", s.Offset, err)
		}
		if debug {
			continue
		}
		if s.ID == wasmbin.SectionImport {
			if imports, err = countImports(s); err != nil {
				return nil, 0, fmt.Errorf("interrupt: %w", err)
			}
		}
		kept = append(kept, s)
	}

	if indexOf(kept, wasmbin.SectionGlobal) < 0 {
		kept = wasmbin.Insert(kept, wasmbin.Section{ID: wasmbin.SectionGlobal})
	}
	g := indexOf(kept, wasmbin.SectionGlobal)
	payload, flag, err := appendGlobal(kept[g].Payload, kept[g].Offset, imports.globals)
	if err != nil {
		return nil, 0, fmt.Errorf("interrupt: global section: %w", err)
	}
	kept[g].Payload = payload

	if indexOf(kept, wasmbin.SectionExport) < 0 {
		kept = wasmbin.Insert(kept, wasmbin.Section{ID: wasmbin.SectionExport})
	}
	e := indexOf(kept, wasmbin.SectionExport)
	if payload, err = appendExport(kept[e].Payload, kept[e].Offset, flag); err != nil {
		return nil, 0, fmt.Errorf("interrupt: export section: %w", err)
	}
	kept[e].Payload = payload

	loops := 0
	if c := indexOf(kept, wasmbin.SectionCode); c >= 0 {
		if payload, loops, err = rewriteCode(kept[c], flag, imports.funcs); err != nil {
			return nil, 0, fmt.Errorf("interrupt: code section: %w", err)
		}
		kept[c].Payload = payload
	}

	size := len(wasmbin.Header)
	for _, s := range kept {
		size += 1 + 5 + len(s.Payload)
	}
	return wasmbin.Encode(kept, size), loops, nil
}

// indexOf returns the position of the section with the given id, or -1.
func indexOf(sections []wasmbin.Section, id byte) int {
	for i, s := range sections {
		if s.ID == id {
			return i
		}
	}
	return -1
}

// isDebugSection reports whether s is a DWARF custom section, whose code
// offsets become wrong once function bodies are rewritten.
func isDebugSection(s wasmbin.Section) (bool, error) {
	if s.ID != wasmbin.SectionCustom {
		return false, nil
	}
	name, err := wasmbin.CustomName(s)
	if err != nil {
		return false, err
	}
	return strings.HasPrefix(name, ".debug_"), nil
}
