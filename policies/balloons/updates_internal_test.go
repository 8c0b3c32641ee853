package balloons

import (
	"strings"
	"testing"
)

func TestListCompare(t *testing.T) {
	old := strings.Repeat("1,", 100) + "3"
	next := strings.Clone(old[:len(old)-1]) + "4"
	same := strings.Clone(old) // equal, but another string in memory
	var l listCompare
	for _, tc := range []struct {
		name       string
		held, next string
		want       bool
	}{
		{"one string", old, old, false},
		{"empty next leaves it alone", old, "", false},
		{"another list", old, next, true},
		{"remembered", old, next, true},
		{"equal lists in two strings", old, same, false},
		{"remembered, equal", old, same, false},
		{"back", next, old, true},
	} {
		if got := l.changed(tc.held, tc.next); got != tc.want {
			t.Errorf("%s: changed = %v, want %v", tc.name, got, tc.want)
		}
	}
}
