package scenario

import (
	"os"
	"testing"
)

// FuzzParse: the strict scenario decoder never panics on any bytes.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("example.yaml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("steps:\n- init: {}\n"))
	f.Add([]byte("steps: []"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Parse(data)
	})
}

// FuzzParseQuantity: quantities never panic, and an accepted one is not
// negative.
func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"500m", "2", "1Gi", "1e3", "1E-30", "0.5", "-1", "1e31"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseQuantity(Quantity(s))
		if err == nil && v.Sign() < 0 {
			t.Fatalf("parseQuantity(%q) = %v, negative", s, v)
		}
	})
}
