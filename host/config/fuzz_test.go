package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: the strict config decoder never panics on any bytes, and a
// configuration it accepts validates or fails with an error (never panics).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, path := range seeds {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("policy:\n  name: balloons\n"))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			return
		}
		_ = cfg.Validate()
	})
}

// FuzzParseQuantity: any string parses to a quantity whose String parses
// back to it, or fails.
func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"0", "256Mi", "1G", "65536", "18446744073709551615", "9223372036854775807Ki", "-1", "1.5Gi"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuantity(s)
		if err != nil {
			return
		}
		again, err := ParseQuantity(q.String())
		if err != nil || again != q {
			t.Fatalf("ParseQuantity(%q) = %d, whose String %q parses to %d, %v", s, q, q.String(), again, err)
		}
	})
}
