package cpuset

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// MaxListLen bounds how many ids ParseList expands, so that a corrupt range
// such as "0-4294967295" fails instead of allocating gigabytes. Linux caps
// NR_CPUS at 8192 and MAX_NUMNODES at 1024; this leaves ample room.
const MaxListLen = 1 << 20

// ParseList parses the Linux list format that sysfs and cgroups use for CPU
// and node sets ("0-3,8-11", "5", "" for none). Surrounding white space, such
// as the trailing newline of a sysfs file, is ignored. The result is sorted
// and free of duplicates; it is nil for an empty list. Reversed ranges
// ("3-1"), empty elements ("1,,2"), signs and the kernel's stride syntax
// ("0-7:2") are errors that quote the offending element.
func ParseList(s string) ([]uint32, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var ids []uint32
	for elem := range strings.SplitSeq(s, ",") {
		lo, hi, err := parseRange(elem)
		if err != nil {
			return nil, fmt.Errorf("list %q: %w", s, err)
		}
		if uint64(len(ids))+uint64(hi-lo)+1 > MaxListLen {
			return nil, fmt.Errorf("list %q: more than %d ids", s, MaxListLen)
		}
		for id := uint64(lo); id <= uint64(hi); id++ {
			ids = append(ids, uint32(id))
		}
	}
	if !slices.IsSorted(ids) {
		slices.Sort(ids)
	}
	return slices.Compact(ids), nil
}

// parseRange parses one element of a list: "N" or "N-M" with N <= M.
func parseRange(elem string) (lo, hi uint32, err error) {
	first, last, isRange := strings.Cut(elem, "-")
	if lo, err = ParseID(first); err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	if hi, err = ParseID(last); err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("reversed range %q", elem)
	}
	return lo, hi, nil
}

var errEmptyElement = errors.New("empty element")

// ParseID parses one id of a list: decimal digits only, no sign, no white
// space, at most 4294967295 (sysfs names such as "cpu12" end in one).
func ParseID(s string) (uint32, error) {
	if s == "" {
		return 0, errEmptyElement
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad id %q", s)
		}
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad id %q: out of range", s)
	}
	return uint32(v), nil
}

// FormatList formats ids in the Linux list format, the inverse of ParseList:
// runs of consecutive ids become ranges ("0-3,8-11"; a run of two is "4-5",
// as the kernel prints it). ids need not be sorted or unique; it is not
// modified. An empty set formats as "".
func FormatList(ids []uint32) string {
	if len(ids) == 0 {
		return ""
	}
	sorted := ids
	if !slices.IsSorted(ids) {
		sorted = slices.Clone(ids)
		slices.Sort(sorted)
	}
	// Two passes: the first measures, the second appends the digits in
	// place into a buffer of exactly that size, and the string is made from
	// it without a copy (nothing writes to it afterwards). Policies format a
	// list for every container they update, and in Wasm every allocation
	// and copy costs.
	size := 0
	forEachRange(sorted, func(lo, hi uint32) {
		size += 1 + decimalDigits(lo)
		if hi != lo {
			size += 1 + decimalDigits(hi)
		}
	})
	buf := make([]byte, 0, size-1)
	forEachRange(sorted, func(lo, hi uint32) {
		if len(buf) > 0 {
			buf = append(buf, ',')
		}
		buf = appendDecimal(buf, lo)
		if hi != lo {
			buf = append(buf, '-')
			buf = appendDecimal(buf, hi)
		}
	})
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// forEachRange calls f with each run of consecutive ids of sorted, as its
// first and last id.
func forEachRange(sorted []uint32, f func(lo, hi uint32)) {
	for i := 0; i < len(sorted); {
		lo, hi := sorted[i], sorted[i]
		i++
		for i < len(sorted) && (sorted[i] == hi || sorted[i] == hi+1) {
			hi = sorted[i]
			i++
		}
		f(lo, hi)
	}
}

// appendDecimal appends id in base 10 to buf, which has room for it:
// digit by digit in place (strconv's version copies each number through a
// call, which Wasm pays for per id).
func appendDecimal(buf []byte, id uint32) []byte {
	n := len(buf) + decimalDigits(id)
	buf = buf[:n]
	for i := n - 1; ; i-- {
		buf[i] = byte('0' + id%10)
		if id /= 10; id == 0 {
			return buf
		}
	}
}

// decimalDigits is how many digits id has in base 10.
func decimalDigits(id uint32) int {
	n := 1
	for ; id >= 10; id /= 10 {
		n++
	}
	return n
}
