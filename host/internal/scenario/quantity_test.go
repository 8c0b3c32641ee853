package scenario

import (
	"strings"
	"testing"
)

func TestQuantities(t *testing.T) {
	for _, tc := range []struct {
		q          Quantity
		milli, raw int64
	}{
		{"500m", 500, 1}, {"2", 2000, 2}, {"0.25", 250, 1}, {"1.5", 1500, 2}, {"1Gi", (1 << 30) * 1000, 1 << 30},
		{"64M", 64e9, 64e6}, {"128Mi", (128 << 20) * 1000, 128 << 20}, {"1e3", 1e6, 1000}, {"1k", 1e6, 1000},
		{"100n", 1, 1}, {".5", 500, 1}, {"0", 0, 0},
	} {
		if milli, err := milliCPU(tc.q); err != nil || milli != tc.milli {
			t.Errorf("milliCPU(%q) = %d, %v; want %d", tc.q, milli, err, tc.milli)
		}
		if raw, err := bytesOf(tc.q); err != nil || raw != tc.raw {
			t.Errorf("bytesOf(%q) = %d, %v; want %d", tc.q, raw, err, tc.raw)
		}
	}
	for _, q := range []Quantity{"abc", "", "1Gb", "-1", "1.2.3", "1e99", "9Ei"} {
		if v, err := bytesOf(q); err == nil || !strings.Contains(err.Error(), "quantity") {
			t.Errorf("bytesOf(%q) = %d, %v; want a quantity error", q, v, err)
		}
	}
}
