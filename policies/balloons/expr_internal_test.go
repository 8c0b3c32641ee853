package balloons

import (
	"strings"
	"testing"
)

// TestExpand: groupBy references as nri-plugins' Expand reads them.
func TestExpand(t *testing.T) {
	values := map[string]string{"pod/namespace": "prod", "pod/labels/app": "web", "name": "c"}
	lookup := func(k string) (string, bool) { v, ok := values[k]; return v, ok }
	for _, tc := range []struct{ expr, want, err string }{
		{"${pod/namespace}-${pod/labels/app}", "prod-web", ""},
		{"ns=$pod/namespace", "ns=prod", ""},
		{"$pod/namespace$name", "prodc", ""},
		{"a$$b", "a$b", ""},
		{"${pod/labels/none}x", "x", ""},
		{"x${name", "", "unterminated"},
		{"${pod/colour}", "", "unknown key"},
		{"x$", "", "unknown key"},
	} {
		got, err := expand(tc.expr, lookup)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("expand(%q): %q, %v; want an error with %q", tc.expr, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("expand(%q) = %q, %v; want %q", tc.expr, got, err, tc.want)
		}
	}
}
