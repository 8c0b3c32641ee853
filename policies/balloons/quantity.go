package balloons

import (
	"fmt"
	"strconv"
	"strings"
)

// maxMilliCPU bounds a quantity (a million CPUs), far above any node.
const maxMilliCPU = 1_000_000_000

// parseMilliCPU parses a CPU quantity: whole or decimal CPUs ("2", "0.5") or
// milli-CPU ("750m").
func parseMilliCPU(s string) (int64, error) {
	bad := func(why string) (int64, error) {
		return 0, fmt.Errorf("quantity %q: %s (want e.g. \"2\", \"0.5\", \"750m\", \"cpuset:0-1\")", s, why)
	}
	num, isMilli := strings.CutSuffix(s, "m")
	whole, frac, hasFrac := strings.Cut(num, ".")
	if whole == "" && frac == "" || !digits(whole) || !digits(frac) || hasFrac && (frac == "" || isMilli) {
		return bad("not a number")
	}
	if len(whole) > 10 {
		return bad("too large")
	}
	w, _ := strconv.ParseInt("0"+whole, 10, 64)
	if isMilli {
		if w > maxMilliCPU {
			return bad("too large")
		}
		return w, nil
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 3 {
		return bad("finer than 1m")
	}
	f, _ := strconv.ParseInt("0"+frac+strings.Repeat("0", 3-len(frac)), 10, 64)
	if milli := w*1000 + f; milli <= maxMilliCPU {
		return milli, nil
	}
	return bad("too large")
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
