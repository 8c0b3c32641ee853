package topology

import (
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
)

// ParseList parses the Linux list format that sysfs uses for CPU and node
// sets ("0-3,8-11", "5", "" for none); see cpuset.ParseList, which it is.
// The result is sorted and free of duplicates, nil for an empty list.
func ParseList(s string) ([]uint32, error) { return cpuset.ParseList(s) }

// FormatList formats ids in the Linux list format, the inverse of ParseList;
// see cpuset.FormatList, which it is.
func FormatList(ids []uint32) string { return cpuset.FormatList(ids) }

// parseID parses a decimal id as the list format does; see cpuset.ParseID.
func parseID(s string) (uint32, error) { return cpuset.ParseID(s) }

// sortedUnique sorts ids in place and drops duplicates.
func sortedUnique(ids []uint32) []uint32 {
	slices.Sort(ids)
	return slices.Compact(ids)
}

// idSet is a set of small ids (CPU or node numbers).
type idSet []bool

func newIDSet(ids []uint32) idSet {
	var s idSet
	for _, id := range ids {
		s.add(id)
	}
	return s
}

func (s *idSet) add(id uint32) {
	if int(id) >= len(*s) {
		*s = append(*s, make([]bool, int(id)+1-len(*s))...)
	}
	(*s)[id] = true
}

func (s idSet) has(id uint32) bool { return int(id) < len(s) && s[id] }

// filter returns the ids of sorted that are in s, in a new slice.
func (s idSet) filter(sorted []uint32) []uint32 {
	out := make([]uint32, 0, len(sorted))
	for _, id := range sorted {
		if s.has(id) {
			out = append(out, id)
		}
	}
	return out
}
