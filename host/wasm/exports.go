package wasm

import (
	"fmt"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// Export is one entry of a module's export section.
type Export struct {
	Name string `json:"name"`
	// Kind is "func", "table", "memory", "global" or "tag".
	Kind string `json:"kind"`
}

var exportKinds = map[byte]string{0: "func", 1: "table", 2: "memory", 3: "global", 4: "tag"}

// Exports lists the module's exports in the order of its export section,
// without compiling or running it (for `nriwasm policy inspect`).
func Exports(module []byte) ([]Export, error) {
	sections, err := wasmbin.Parse(module)
	if err != nil {
		return nil, fmt.Errorf("read exports: %w", err)
	}
	var exports []Export
	for _, s := range sections {
		if s.ID != wasmbin.SectionExport {
			continue
		}
		r := s.Reader()
		n, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("read exports: count: %w", err)
		}
		for i := range n {
			name, err := r.Name()
			if err != nil {
				return nil, fmt.Errorf("read exports: entry %d: %w", i, err)
			}
			kind, err := r.Byte()
			if err != nil {
				return nil, fmt.Errorf("read exports: entry %d (%q): %w", i, name, err)
			}
			if _, err := r.U32(); err != nil {
				return nil, fmt.Errorf("read exports: entry %d (%q): %w", i, name, err)
			}
			k, ok := exportKinds[kind]
			if !ok {
				return nil, fmt.Errorf("read exports: entry %d (%q): unknown kind %#x: %w", i, name, kind, wasmbin.ErrMalformed)
			}
			exports = append(exports, Export{Name: name, Kind: k})
		}
	}
	return exports, nil
}
