package ref

import (
	"errors"
	"testing"
)

const dgst = "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Reference
	}{
		{"oci://registry.example.com/policies/balloons:1.2", Reference{Registry: "registry.example.com", Repository: "policies/balloons", Tag: "1.2"}},
		{"oci://localhost:5000/p@" + dgst, Reference{Registry: "localhost:5000", Repository: "p", Digest: dgst}},
		{"oci://localhost:5000/p:v1@" + dgst, Reference{Registry: "localhost:5000", Repository: "p", Tag: "v1", Digest: dgst}},
		{"oci-layout:///var/lib/policies:v1", Reference{Layout: "/var/lib/policies", Tag: "v1"}},
		{"oci-layout://rel/dir@" + dgst, Reference{Layout: "rel/dir", Digest: dgst}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("Parse = %+v, want %+v", got, tc.want)
			}
			if got.String() != tc.in {
				t.Fatalf("String = %q, want %q", got.String(), tc.in)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{
		"registry.example.com/p:1",         // no scheme
		"oci://registry.example.com/p",     // no tag or digest
		"oci://registry.example.com:1",     // no repository
		"oci://registry.example.com/P:1",   // upper-case repository
		"oci://r.example.com/p@sha256:abc", // short digest
		"oci://r.example.com/p:bad tag",    // invalid tag
		"oci-layout://:v1",                 // no path
		"oci://exa mple.com/p:1",           // invalid registry
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := Parse(in); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) = %v, want ErrInvalid", in, err)
			}
		})
	}
}

func TestAbs(t *testing.T) {
	r, _ := Parse("oci-layout://rel:v1")
	if got := r.Abs("/base").String(); got != "oci-layout:///base/rel:v1" {
		t.Fatalf("Abs = %q", got)
	}
	r, _ = Parse("oci://r.example.com/p:v1")
	if got := r.Abs("/base"); got != r {
		t.Fatalf("Abs changed a registry reference: %+v", got)
	}
}
