package cpuset_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
		size              int
	}{
		{in: "", want: "", size: 0},
		{in: "0-3,8", want: "0-3,8", size: 5},
		{in: "8,3,2,1,0,1", want: "0-3,8", size: 5},
		{in: "0-1,2-3", want: "0-3", size: 4},
		{in: "5-5", want: "5", size: 1},
		{in: "0-3,x", wantErr: `cpuset: list "0-3,x": bad id "x"`},
		{in: "4-2", wantErr: `reversed range "4-2"`},
		{in: "1,,2", wantErr: "empty element"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			s, err := cpuset.Parse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) = %v, %v; want error containing %q", tc.in, s, err, tc.wantErr)
				}
				return
			}
			if err != nil || s.String() != tc.want || s.Size() != tc.size || s.IsEmpty() != (tc.size == 0) {
				t.Fatalf("Parse(%q) = %q (size %d), %v; want %q (size %d)", tc.in, s, s.Size(), err, tc.want, tc.size)
			}
		})
	}
}

func TestAlgebra(t *testing.T) {
	tests := []struct {
		a, b                    string
		union, inter, diff      string
		aInB, intersects, equal bool
	}{
		{a: "", b: "", union: "", inter: "", diff: "", aInB: true, equal: true},
		{a: "0-3", b: "", union: "0-3", inter: "", diff: "0-3"},
		{a: "", b: "0-3", union: "0-3", inter: "", diff: "", aInB: true},
		{a: "0-3", b: "2-5", union: "0-5", inter: "2-3", diff: "0-1", intersects: true},
		{a: "1,3", b: "0-3", union: "0-3", inter: "1,3", diff: "", aInB: true, intersects: true},
		{a: "0-3", b: "0-3", union: "0-3", inter: "0-3", diff: "", aInB: true, intersects: true, equal: true},
		{a: "0,2,4", b: "1,3,5", union: "0-5", inter: "", diff: "0,2,4"},
		{a: "10-20", b: "0-9,21", union: "0-21", inter: "", diff: "10-20"},
	}
	for _, tc := range tests {
		t.Run(tc.a+"|"+tc.b, func(t *testing.T) {
			a, b := cpuset.MustParse(tc.a), cpuset.MustParse(tc.b)
			if got := a.Union(b).String(); got != tc.union {
				t.Errorf("Union = %q, want %q", got, tc.union)
			}
			if got := a.Intersection(b).String(); got != tc.inter {
				t.Errorf("Intersection = %q, want %q", got, tc.inter)
			}
			if got := a.Difference(b).String(); got != tc.diff {
				t.Errorf("Difference = %q, want %q", got, tc.diff)
			}
			if got := a.IsSubsetOf(b); got != tc.aInB {
				t.Errorf("IsSubsetOf = %v, want %v", got, tc.aInB)
			}
			if got := a.Intersects(b); got != tc.intersects {
				t.Errorf("Intersects = %v, want %v", got, tc.intersects)
			}
			if got := a.Equal(b); got != tc.equal {
				t.Errorf("Equal = %v, want %v", got, tc.equal)
			}
			// Operands are values: nothing above changed them.
			if a.String() != cpuset.MustParse(tc.a).String() || b.String() != cpuset.MustParse(tc.b).String() {
				t.Errorf("operands changed: %q %q", a, b)
			}
		})
	}
}

func TestAppendTo(t *testing.T) {
	s := cpuset.New(9, 1, 3)
	buf := make([]uint32, 1, 8)
	got := s.AppendTo(buf)
	if !slices.Equal(got, []uint32{0, 1, 3, 9}) || &got[0] != &buf[0] {
		t.Fatalf("AppendTo = %v, want [0 1 3 9] in the caller's list", got)
	}
	got[1] = 7
	if !s.Contains(1) || s.Contains(7) {
		t.Fatalf("AppendTo handed out the set's own slice: %v", s)
	}
}

func TestContainsAndSorted(t *testing.T) {
	s := cpuset.New(9, 3, 3, 0, 1)
	if got := s.Sorted(); !slices.Equal(got, []uint32{0, 1, 3, 9}) {
		t.Fatalf("Sorted = %v", got)
	}
	ids := s.Sorted()
	ids[0] = 42
	if s.Contains(42) || !s.Contains(0) {
		t.Fatalf("Sorted returned the set's own slice")
	}
	for _, tc := range []struct {
		id   uint32
		want bool
	}{{0, true}, {2, false}, {3, true}, {9, true}, {10, false}} {
		if got := s.Contains(tc.id); got != tc.want {
			t.Errorf("Contains(%d) = %v, want %v", tc.id, got, tc.want)
		}
	}
	if !(cpuset.Set{}).IsEmpty() || cpuset.New().String() != "" {
		t.Errorf("zero Set is not empty")
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("MustParse(\"x\") did not panic")
		}
	}()
	cpuset.MustParse("x")
}

func TestAll(t *testing.T) {
	s := cpuset.New(9, 3, 0)
	var got []uint32
	for id := range s.All() {
		got = append(got, id)
	}
	if !slices.Equal(got, []uint32{0, 3, 9}) {
		t.Errorf("All yielded %v, want [0 3 9]", got)
	}
	got = got[:0]
	for id := range s.All() {
		got = append(got, id)
		if id == 3 {
			break
		}
	}
	if !slices.Equal(got, []uint32{0, 3}) {
		t.Errorf("All after break yielded %v, want [0 3]", got)
	}
	for range (cpuset.Set{}).All() {
		t.Errorf("the empty set yielded an id")
	}
}

func TestChanges(t *testing.T) {
	type change struct {
		id     uint32
		joined bool
	}
	for _, tc := range []struct {
		from, to string
		want     []change
	}{
		{"", "", nil},
		{"0-3", "0-3", nil},
		{"", "1,4", []change{{1, true}, {4, true}}},
		{"1,4", "", []change{{1, false}, {4, false}}},
		{"0-3", "0-2,5", []change{{3, false}, {5, true}}},
		{"2,7-9", "0,7,10", []change{{0, true}, {2, false}, {8, false}, {9, false}, {10, true}}},
	} {
		var got []change
		for id, joined := range cpuset.MustParse(tc.from).Changes(cpuset.MustParse(tc.to)) {
			got = append(got, change{id, joined})
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q.Changes(%q) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
	s := cpuset.MustParse("0-9")
	n := 0
	for range s.Changes(s) {
		n++
	}
	for range s.Changes(cpuset.MustParse("20-29")) {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("Changes of a set with itself and then to a disjoint one up to a break yielded %d ids, want 3", n)
	}
}

func TestEdit(t *testing.T) {
	for _, tc := range []struct {
		s           string
		add, remove []uint32
		want        string
	}{
		{"", nil, nil, ""},
		{"0-3", nil, nil, "0-3"},
		{"0-3", []uint32{2}, []uint32{7}, "0-3"},
		{"0-3", []uint32{3, 3}, nil, "0-3"},
		{"5", []uint32{5, 5}, nil, "5"},
		{"0-3", []uint32{9, 5}, []uint32{1}, "0,2-3,5,9"},
		{"0-3", []uint32{4}, []uint32{4}, "0-3"},
		{"0-3", nil, []uint32{3, 0, 1, 2}, ""},
		{"", []uint32{8, 1, 8}, nil, "1,8"},
		{"2,4", []uint32{3}, []uint32{2}, "3-4"},
	} {
		s := cpuset.MustParse(tc.s)
		add, remove := slices.Clone(tc.add), slices.Clone(tc.remove)
		got := s.Edit(add, remove)
		if want := s.Union(cpuset.New(tc.add...)).Difference(cpuset.New(tc.remove...)); !got.Equal(want) || got.String() != tc.want {
			t.Errorf("%q.Edit(%v, %v) = %q; want %q", tc.s, tc.add, tc.remove, got, tc.want)
		}
		if !slices.Equal(add, tc.add) || !slices.Equal(remove, tc.remove) {
			t.Errorf("%q.Edit(%v, %v) changed its arguments to %v, %v", tc.s, tc.add, tc.remove, add, remove)
		}
	}
	// Against Union then Difference on every subset pair of 0-5.
	for sm := range 64 {
		for am := range 64 {
			for rm := range 64 {
				// with repeats, unsorted: the bits of the mask and of its half
				s, add, remove := cpuset.New(bits(sm)...), append(bits(am), bits(am>>3)...), append(bits(rm), bits(rm>>3)...)
				if got, want := s.Edit(add, remove), s.Union(cpuset.New(add...)).Difference(cpuset.New(remove...)); !got.Equal(want) {
					t.Fatalf("%q.Edit(%v, %v) = %q; want %q", s, add, remove, got, want)
				}
			}
		}
	}
}

// bits are the ids of mask's set bits.
func bits(mask int) []uint32 {
	var ids []uint32
	for i := range 6 {
		if mask&(1<<i) != 0 {
			ids = append(ids, uint32(i))
		}
	}
	return ids
}
