package ref

import (
	"errors"
	"testing"
)

// FuzzParse: parsing any string never panics, every error wraps ErrInvalid,
// and an accepted reference's String parses back to an equal one.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"oci://ghcr.io/nriwasm/policies/balloons:1.0.0",
		"oci://localhost:5000/p@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"oci-layout:///var/lib/p:v1",
		"oci://a/b", "oci://", "docker://x/y:z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		again, err := Parse(r.String())
		if err != nil || again.String() != r.String() {
			t.Fatalf("Parse(%q).String() = %q, which parses to %q, %v", s, r.String(), again.String(), err)
		}
	})
}
