package topologyaware

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
)

// AmountKind tells how a CPU amount of the configuration was written.
type AmountKind int

// The ways to write a CPU amount, as nri-plugins reads them.
const (
	// AmountAbsent: the field was not given.
	AmountAbsent AmountKind = iota
	// AmountQuantity: a Kubernetes CPU quantity, "2", "1.5" or "750m".
	AmountQuantity
	// AmountCPUSet: "cpuset:0-1", these CPUs.
	AmountCPUSet
	// AmountExcludeCPUSet: "exclude-cpuset:0-1", every other CPU.
	AmountExcludeCPUSet
)

const (
	prefixCPUSet        = "cpuset:"
	prefixExcludeCPUSet = "exclude-cpuset:"
)

// CPUAmount is a CPU amount of the configuration: a quantity or a cpuset.
type CPUAmount struct {
	Kind AmountKind
	// Milli is the quantity in milli-CPU (AmountQuantity).
	Milli int64
	// Set is the cpuset (AmountCPUSet, AmountExcludeCPUSet).
	Set cpuset.Set
}

// String writes the amount back in configuration form.
func (a CPUAmount) String() string {
	switch a.Kind {
	case AmountQuantity:
		if a.Milli%1000 == 0 {
			return strconv.FormatInt(a.Milli/1000, 10)
		}
		return strconv.FormatInt(a.Milli, 10) + "m"
	case AmountCPUSet:
		return prefixCPUSet + a.Set.String()
	case AmountExcludeCPUSet:
		return prefixExcludeCPUSet + a.Set.String()
	}
	return ""
}

// parseCPUAmount parses "cpuset:LIST", "exclude-cpuset:LIST" or a quantity.
func parseCPUAmount(s string) (CPUAmount, error) {
	for _, p := range []struct {
		prefix string
		kind   AmountKind
	}{{prefixCPUSet, AmountCPUSet}, {prefixExcludeCPUSet, AmountExcludeCPUSet}} {
		if list, ok := strings.CutPrefix(s, p.prefix); ok {
			set, err := cpuset.Parse(list)
			if err != nil {
				return CPUAmount{}, err
			}
			if set.IsEmpty() {
				return CPUAmount{}, fmt.Errorf("%q names no CPUs", s)
			}
			return CPUAmount{Kind: p.kind, Set: set}, nil
		}
	}
	milli, err := parseMilliCPU(s)
	if err != nil {
		return CPUAmount{}, err
	}
	return CPUAmount{Kind: AmountQuantity, Milli: milli}, nil
}

// maxMilliCPU bounds a quantity (a million CPUs), far above any node.
const maxMilliCPU = 1_000_000_000

// parseMilliCPU parses a CPU quantity in the forms a CPU request is written
// in: whole or decimal CPUs ("2", "0.5") or milli-CPU ("750m").
func parseMilliCPU(s string) (int64, error) {
	bad := func(why string) (int64, error) {
		return 0, fmt.Errorf("quantity %q: %s (want e.g. \"2\", \"0.5\", \"750m\", \"cpuset:0-1\")", s, why)
	}
	num, isMilli := strings.CutSuffix(s, "m")
	whole, frac, hasFrac := strings.Cut(num, ".")
	if whole == "" && frac == "" || !digits(whole) || !digits(frac) || hasFrac && frac == "" {
		return bad("not a number")
	}
	if len(whole) > 10 {
		return bad("too large")
	}
	w, _ := strconv.ParseInt("0"+whole, 10, 64)
	scale, fracDigits := int64(1000), 3
	if isMilli {
		scale, fracDigits = 1, 0
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > fracDigits {
		return bad("finer than 1m")
	}
	f, _ := strconv.ParseInt("0"+frac+strings.Repeat("0", fracDigits-len(frac)), 10, 64)
	milli := w*scale + f
	if milli > maxMilliCPU {
		return bad("too large")
	}
	return milli, nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
