package cpuset

import (
	"slices"
	"testing"
)

// FuzzParseList: parsing any string never panics, and a list it accepts
// formats to one that parses to the same sorted, duplicate-free ids.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"", "0", "0-3,8", "0-1,3,5-7\n", "4294967295", "1-0", "0,,1", " 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := ParseList(s)
		if err != nil {
			return
		}
		if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Fatalf("ParseList(%q) = %v, not sorted and unique", s, ids)
		}
		again, err := ParseList(FormatList(ids))
		if err != nil || !slices.Equal(again, ids) {
			t.Fatalf("ParseList(FormatList(%v)) = %v, %v", ids, again, err)
		}
	})
}
