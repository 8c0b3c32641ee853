package interrupt

import (
	"errors"
	"testing"

	"github.com/nriwasm/nriwasm/host/wasm/internal/wasmbin"
)

// FuzzInstrument: the rewriter runs on modules before wazero validates them.
// It never panics, and what it returns parses and is refused a second time
// (it carries the poll import).
func FuzzInstrument(f *testing.F) {
	f.Add(counterModule())
	f.Add([]byte(wasmbin.Header))
	f.Add(append([]byte(wasmbin.Header), 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x0a, 0x07, 0x01, 0x05, 0x00, 0x03, 0x40, 0x0b, 0x0b))
	f.Fuzz(func(t *testing.T, module []byte) {
		out, _, err := Instrument(module)
		if err != nil {
			return
		}
		if _, err := wasmbin.Parse(out); err != nil {
			t.Fatalf("instrumented module does not parse: %v", err)
		}
		if _, _, err := Instrument(out); !errors.Is(err, errImportExists) {
			t.Fatalf("instrumenting twice: %v, want %v", err, errImportExists)
		}
	})
}
