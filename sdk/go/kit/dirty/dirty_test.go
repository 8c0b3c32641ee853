package dirty_test

import (
	"cmp"
	"slices"
	"testing"

	"github.com/nriwasm/nriwasm/sdk/go/kit/dirty"
)

type thing struct {
	dirty.Mark
	n int
}

func ns(l *dirty.List[*thing]) []int {
	var out []int
	for _, x := range l.Items() {
		out = append(out, x.n)
	}
	return out
}

// TestList: each thing once, in the order first added; Drop and Clear
// unmark what they remove, so it can be added again.
func TestList(t *testing.T) {
	a, b, c := &thing{n: 1}, &thing{n: 2}, &thing{n: 3}
	var l dirty.List[*thing]
	for _, x := range []*thing{c, a, c, b, a} {
		l.Add(x)
	}
	if got := ns(&l); !slices.Equal(got, []int{3, 1, 2}) {
		t.Fatalf("Items = %v, want [3 1 2]", got)
	}
	l.Sort(func(x, y *thing) int { return cmp.Compare(x.n, y.n) })
	if got := ns(&l); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("sorted Items = %v, want [1 2 3]", got)
	}
	l.Drop(func(x *thing) bool { return x == b })
	if got := ns(&l); !slices.Equal(got, []int{1, 3}) || b.Listed() || !a.Listed() {
		t.Errorf("after Drop(b): Items = %v, b listed %v, a listed %v", got, b.Listed(), a.Listed())
	}
	l.Add(b)
	if got := ns(&l); !slices.Equal(got, []int{1, 3, 2}) {
		t.Errorf("b added again: Items = %v, want [1 3 2]", got)
	}
	l.Clear()
	if len(l.Items()) != 0 || a.Listed() || b.Listed() || c.Listed() {
		t.Errorf("after Clear: Items = %v, listed %v %v %v", ns(&l), a.Listed(), b.Listed(), c.Listed())
	}
	l.Add(c)
	if got := ns(&l); !slices.Equal(got, []int{3}) {
		t.Errorf("after Clear and Add(c): Items = %v, want [3]", got)
	}
}
