// Package cpuset is a set of CPU or NUMA node ids in the ABI's Linux list form
// ("0-3,8"), the form of ContainerAdjustment.cpuset_cpus and cpuset_mems and of
// sysfs' cpulist files. ParseList and FormatList are the list format itself;
// Set is an immutable sorted set with the set algebra a policy needs.
//
// The package has no dependencies beyond the standard library, so both the host
// and Wasm policies use it: the list format is parsed in exactly one place.
package cpuset

import (
	"fmt"
	"iter"
	"slices"
)

// Set is an immutable set of ids. The zero value is the empty set. Sets are
// values: every operation returns a new Set and never changes its operands.
type Set struct {
	ids []uint32 // sorted, unique; never modified after construction
}

// New returns the set of ids; they need not be sorted or unique.
func New(ids ...uint32) Set {
	if len(ids) == 0 {
		return Set{}
	}
	s := slices.Clone(ids)
	slices.Sort(s)
	return Set{ids: slices.Compact(s)}
}

// Parse parses a list ("0-3,8", "" for the empty set). Its errors quote the
// whole list and the offending element.
func Parse(s string) (Set, error) {
	ids, err := ParseList(s)
	if err != nil {
		return Set{}, fmt.Errorf("cpuset: %w", err)
	}
	return Set{ids: ids}, nil
}

// MustParse is Parse for constants; it panics on an error.
func MustParse(s string) Set {
	set, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return set
}

// String formats the set in canonical list form: sorted ranges, "" when empty.
func (s Set) String() string { return FormatList(s.ids) }

// Size is the number of ids in the set.
func (s Set) Size() int { return len(s.ids) }

// IsEmpty tells whether the set has no ids.
func (s Set) IsEmpty() bool { return len(s.ids) == 0 }

// Sorted returns the ids in ascending order, in a new slice the caller owns.
func (s Set) Sorted() []uint32 { return slices.Clone(s.ids) }

// AppendTo appends the ids in ascending order to dst and returns it: a
// caller with a list of its own to reuse copies them without an allocation.
func (s Set) AppendTo(dst []uint32) []uint32 { return append(dst, s.ids...) }

// All yields the ids in ascending order, without copying them.
func (s Set) All() iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		for _, id := range s.ids {
			if !yield(id) {
				return
			}
		}
	}
}

// Changes yields the ids in exactly one of s and o, ascending: each id of o
// not in s with true (it joins on the way from s to o), each id of s not in o
// with false (it leaves). It walks both sets once without allocating, and
// yields nothing at once when both share their ids in memory (a set compared
// with itself). A caller that keeps counts for s adjusts them to o this way.
func (s Set) Changes(o Set) iter.Seq2[uint32, bool] {
	return func(yield func(uint32, bool) bool) {
		a, b := s.ids, o.ids
		if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
			return
		}
		i, j := 0, 0
		for i < len(a) || j < len(b) {
			switch {
			case j == len(b) || i < len(a) && a[i] < b[j]:
				if !yield(a[i], false) {
					return
				}
				i++
			case i == len(a) || b[j] < a[i]:
				if !yield(b[j], true) {
					return
				}
				j++
			default:
				i++
				j++
			}
		}
	}
}

// Contains tells whether id is in the set.
func (s Set) Contains(id uint32) bool {
	_, found := slices.BinarySearch(s.ids, id)
	return found
}

// Equal tells whether both sets hold the same ids. Two sets sharing their
// ids in memory (one assigned from the other) are equal without a comparison.
func (s Set) Equal(o Set) bool {
	if len(s.ids) != len(o.ids) {
		return false
	}
	return len(s.ids) == 0 || &s.ids[0] == &o.ids[0] || slices.Equal(s.ids, o.ids)
}

// IsSubsetOf tells whether every id of s is in o.
func (s Set) IsSubsetOf(o Set) bool {
	j := 0
	for _, id := range s.ids {
		for j < len(o.ids) && o.ids[j] < id {
			j++
		}
		if j == len(o.ids) || o.ids[j] != id {
			return false
		}
	}
	return true
}

// Intersects tells whether s and o share an id.
func (s Set) Intersects(o Set) bool {
	i, j := 0, 0
	for i < len(s.ids) && j < len(o.ids) {
		switch {
		case s.ids[i] < o.ids[j]:
			i++
		case s.ids[i] > o.ids[j]:
			j++
		default:
			return true
		}
	}
	return false
}

// Union returns the ids in s or o.
func (s Set) Union(o Set) Set {
	if len(o.ids) == 0 {
		return s
	}
	if len(s.ids) == 0 {
		return o
	}
	out := make([]uint32, 0, len(s.ids)+len(o.ids))
	i, j := 0, 0
	for i < len(s.ids) && j < len(o.ids) {
		switch {
		case s.ids[i] < o.ids[j]:
			out = append(out, s.ids[i])
			i++
		case s.ids[i] > o.ids[j]:
			out = append(out, o.ids[j])
			j++
		default:
			out = append(out, s.ids[i])
			i++
			j++
		}
	}
	out = append(out, s.ids[i:]...)
	out = append(out, o.ids[j:]...)
	return Set{ids: out}
}

// Edit returns (s ∪ add) \ remove with one allocation, where Union then
// Difference take two and New for each list two more. add and remove need
// not be sorted or unique (sorted ones are not copied); an id in both is
// removed. It finds each change by binary search and copies the runs of s
// between changes whole, so a few changes to a large set cost the copy, not
// a comparison per id. It returns s itself when nothing changes.
func (s Set) Edit(add, remove []uint32) Set {
	if !slices.IsSorted(add) {
		add = slices.Sorted(slices.Values(add))
	}
	if !slices.IsSorted(remove) {
		remove = slices.Sorted(slices.Values(remove))
	}
	var out []uint32
	last := 0 // s.ids[:last] are decided
	i, j := 0, 0
	prev := int64(-1) // the change before
	for i < len(add) || j < len(remove) {
		var id uint32
		adding := false
		switch {
		case j == len(remove) || i < len(add) && add[i] < remove[j]:
			id, adding = add[i], true
			i++
		case i == len(add) || remove[j] < add[i]:
			id = remove[j]
			j++
		default: // in both: removed
			id = remove[j]
			i++
			j++
		}
		if int64(id) == prev {
			continue // a repeat
		}
		prev = int64(id)
		pos, found := slices.BinarySearch(s.ids[last:], id)
		pos += last
		if adding == found {
			continue // there already, or not there to remove
		}
		if out == nil {
			out = make([]uint32, 0, len(s.ids)+len(add))
		}
		out = append(out, s.ids[last:pos]...)
		if adding {
			out = append(out, id)
			last = pos
		} else {
			last = pos + 1
		}
	}
	switch {
	case out == nil:
		return s
	case len(out)+len(s.ids)-last == 0:
		return Set{}
	}
	return Set{ids: append(out, s.ids[last:]...)}
}

// Intersection returns the ids in both s and o.
func (s Set) Intersection(o Set) Set {
	var out []uint32
	i, j := 0, 0
	for i < len(s.ids) && j < len(o.ids) {
		switch {
		case s.ids[i] < o.ids[j]:
			i++
		case s.ids[i] > o.ids[j]:
			j++
		default:
			out = append(out, s.ids[i])
			i++
			j++
		}
	}
	return Set{ids: out}
}

// Difference returns the ids in s that are not in o.
func (s Set) Difference(o Set) Set {
	if len(o.ids) == 0 || len(s.ids) == 0 {
		return s
	}
	out := make([]uint32, 0, len(s.ids))
	j := 0
	for _, id := range s.ids {
		for j < len(o.ids) && o.ids[j] < id {
			j++
		}
		if j < len(o.ids) && o.ids[j] == id {
			continue
		}
		out = append(out, id)
	}
	if len(out) == 0 {
		return Set{}
	}
	return Set{ids: out}
}
