// Package interrupt rewrites a WebAssembly binary module so that the host can
// stop a runaway call cheaply.
//
// wazero's RuntimeConfig.WithCloseOnContextDone makes the compiler insert a
// call into the runtime at every loop header, which slows Go-compiled guests
// down several times. Instrument instead adds a countdown: a mutable i32
// global, exported as GlobalName, that every loop iteration decrements, and a
// function import PollModule.PollName of type () -> () that the guest calls
// whenever the decremented countdown reads zero or less:
//
//	global.get $countdown
//	i32.const 1
//	i32.sub
//	global.set $countdown
//	global.get $countdown
//	i32.const 0
//	i32.le_s
//	if
//	  call $poll
//	end
//
// The host's poll function either resets the countdown to Countdown or, past
// the call's deadline, fails the call (a wazero host function panics). Since
// the guest returns to the host at least every Countdown loop iterations, a
// runaway loop still reaches points where Go can preempt its goroutine (for
// a garbage collection, say); to stop a call at once the host also sets the
// countdown to 0. Code that runs no loop (straight-line code, host calls) is
// not interrupted by the check.
//
// The rewriter decodes every instruction of every function body, so that no
// immediate byte is mistaken for an opcode; it fails on opcodes it does not
// know rather than emit a corrupt module. Custom sections are kept except
// DWARF ones (".debug_*"), whose code offsets the rewrite invalidates.
//
// Instrument also joins the module's data segments where only a few zero
// bytes lie between them (mergeData): the same initial memory, from a few
// dozen segments instead of a Go guest's tens of thousands, each of which
// wazero keeps on the host's heap for as long as the module is loaded.
package interrupt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

const (
	// GlobalName is the export name of the countdown global.
	GlobalName = "nriwasm_interrupt_countdown"
	// PollModule and PollName name the imported poll function, () -> ().
	PollModule = "nriwasm"
	PollName   = "interrupt_poll"
	// Countdown is the initial value of the countdown global, and the value
	// the poll function should reset it to: the number of loop iterations
	// between two polls.
	Countdown = 65536
	// Version names the form of the inserted check; it changes whenever
	// Instrument's output for a given input does, so that caches of
	// instrumented modules can key on it.
	Version = "3"
)

// countdownInit is the countdown's initializer: i32.const Countdown; end.
var countdownInit = []byte{0x7f, 0x01, opI32Const, 0x80, 0x80, 0x04, opEnd}

// Instrument returns a copy of module in which every `loop` instruction of
// every function body is followed by the countdown check (see the package
// documentation), and the number of loops instrumented.
//
// The poll function is imported after the existing imports, so it takes
// index F, the number of imported functions, and every defined function
// moves up by one: Instrument renumbers calls, return calls and ref.func in
// code and constant expressions, exports, the start function, element
// segments and the "name" section (dropped if malformed). A type () -> () is
// appended to the type section if there is none, and the countdown global
// takes the last global index, so no type or global index changes.
//
// Instrument fails if the module already exports GlobalName or imports the
// poll function (for instance because it was already instrumented), if it is
// malformed or truncated, uses GC proposal types, or if a function body uses
// an opcode the decoder does not know; errors name the byte offset in module
// and the function index.
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
	poll := imports.funcs

	// New entries: the type, the import, the global and its export.
	typ := section(&kept, wasmbin.SectionType)
	payload, typeIdx, err := pollType(*typ)
	if err != nil {
		return nil, 0, fmt.Errorf("interrupt: type section: %w", err)
	}
	typ.Payload = payload
	imp := section(&kept, wasmbin.SectionImport)
	entry := wasmbin.AppendName(wasmbin.AppendName(nil, PollModule), PollName)
	entry = wasmbin.AppendU32(append(entry, kindFunc), typeIdx)
	if imp.Payload, _, err = appendEntry(imp.Payload, imp.Offset, entry); err != nil {
		return nil, 0, fmt.Errorf("interrupt: import section: %w", err)
	}
	glob := section(&kept, wasmbin.SectionGlobal)
	if payload, err = renumberSection(*glob, poll); err != nil {
		return nil, 0, fmt.Errorf("interrupt: global section: %w", err)
	}
	payload, countdown, err := appendEntry(payload, glob.Offset, countdownInit)
	if err != nil {
		return nil, 0, fmt.Errorf("interrupt: global section: %w", err)
	}
	glob.Payload, countdown = payload, countdown+imports.globals
	exp := section(&kept, wasmbin.SectionExport)
	if payload, err = renumberExports(*exp, poll); err != nil {
		return nil, 0, fmt.Errorf("interrupt: export section: %w", err)
	}
	entry = wasmbin.AppendU32(append(wasmbin.AppendName(nil, GlobalName), kindGlobal), countdown)
	if exp.Payload, _, err = appendEntry(payload, exp.Offset, entry); err != nil {
		return nil, 0, fmt.Errorf("interrupt: export section: %w", err)
	}

	// Renumber the rest and instrument the code.
	loops := 0
	out := kept[:0]
	for _, s := range kept {
		switch s.ID {
		case wasmbin.SectionType, wasmbin.SectionImport, wasmbin.SectionGlobal, wasmbin.SectionExport:
		case wasmbin.SectionCode:
			if s.Payload, loops, err = rewriteCode(s, appendCheck(nil, countdown, poll), poll); err != nil {
				return nil, 0, fmt.Errorf("interrupt: code section: %w", err)
			}
		case wasmbin.SectionCustom:
			name, data, err := wasmbin.SplitCustom(s)
			if err == nil && name == "name" {
				if s, err = renumberNames(s, data, poll); err != nil {
					continue // a malformed name section is only debug info
				}
			}
		default:
			if s.Payload, err = renumberSection(s, poll); err != nil {
				return nil, 0, fmt.Errorf("interrupt: section %d at offset %d: %w", s.ID, s.Offset, err)
			}
			if s.ID == wasmbin.SectionData && !hasSection(kept, wasmbin.SectionDataCount) {
				s.Payload = mergeData(s.Payload, s.Offset)
			}
		}
		out = append(out, s)
	}
	size := len(wasmbin.Header)
	for _, s := range out {
		size += 1 + 5 + len(s.Payload)
	}
	return wasmbin.Encode(out, size), loops, nil
}

// hasSection reports whether sections hold one with the given id.
func hasSection(sections []wasmbin.Section, id byte) bool {
	return slices.ContainsFunc(sections, func(s wasmbin.Section) bool { return s.ID == id })
}

// section returns the section with the given id, inserting an empty one
// (nil payload) if there is none. The pointer is valid until the next call.
func section(sections *[]wasmbin.Section, id byte) *wasmbin.Section {
	for i := range *sections {
		if (*sections)[i].ID == id {
			return &(*sections)[i]
		}
	}
	*sections = wasmbin.Insert(*sections, wasmbin.Section{ID: id})
	return section(sections, id)
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
