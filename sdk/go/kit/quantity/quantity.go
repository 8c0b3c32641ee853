// Package quantity reads the CPU amounts of nri-plugins-style policy
// configurations: a Kubernetes CPU quantity ("2", "1.5", "750m") or a
// cpuset ("cpuset:0-3", or "exclude-cpuset:0-3" for every other CPU).
package quantity

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/sdk/go/kit/jsontext"
)

// MaxMilliCPU bounds a quantity (a million CPUs), far above any node.
const MaxMilliCPU = 1_000_000_000

// Kind tells how a CPU amount was written.
type Kind int

// The ways to write a CPU amount.
const (
	// Absent: the field was not given.
	Absent Kind = iota
	// Quantity: a Kubernetes CPU quantity, "2", "1.5" or "750m".
	Quantity
	// CPUSet: "cpuset:0-1", these CPUs.
	CPUSet
	// ExcludeCPUSet: "exclude-cpuset:0-1", every other CPU.
	ExcludeCPUSet
)

// The prefixes of the cpuset forms.
const (
	PrefixCPUSet        = "cpuset:"
	PrefixExcludeCPUSet = "exclude-cpuset:"
)

// CPUAmount is a CPU amount: a quantity or a cpuset. The zero value is
// Absent. It decodes from JSON (and so from YAML through sigs.k8s.io/yaml)
// as a string or a number.
type CPUAmount struct {
	Kind Kind
	// Milli is the quantity in milli-CPU (Quantity).
	Milli int64
	// Set is the cpuset (CPUSet, ExcludeCPUSet).
	Set cpuset.Set
}

// IsSet tells whether the amount is a cpuset, given or excluded.
func (a CPUAmount) IsSet() bool { return a.Kind == CPUSet || a.Kind == ExcludeCPUSet }

// String writes the amount back in configuration form; "" when Absent.
func (a CPUAmount) String() string {
	switch a.Kind {
	case Quantity:
		if a.Milli%1000 == 0 {
			return strconv.FormatInt(a.Milli/1000, 10)
		}
		return strconv.FormatInt(a.Milli, 10) + "m"
	case CPUSet:
		return PrefixCPUSet + a.Set.String()
	case ExcludeCPUSet:
		return PrefixExcludeCPUSet + a.Set.String()
	}
	return ""
}

// UnmarshalJSON implements json.Unmarshaler: a quantity (string or number),
// "cpuset:LIST" or "exclude-cpuset:LIST".
func (a *CPUAmount) UnmarshalJSON(b []byte) error {
	doc, err := jsontext.Parse(b)
	switch doc.(type) {
	case nil, string, jsontext.Number:
	default:
		err = errNotAmount
	}
	if err != nil {
		return fmt.Errorf("want a string or number, got %s", b)
	}
	v, err := CPUAmountFromJSON(doc)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// errNotAmount is a JSON value that is neither a string nor a number.
var errNotAmount = errors.New("not a string or number")

// CPUAmountFromJSON is UnmarshalJSON for a value jsontext.Parse read (a
// string or jsontext.Number; null reads as ""), for a policy that decodes its
// configuration without encoding/json (policyconfig.Decoder).
func CPUAmountFromJSON(doc any) (CPUAmount, error) {
	var s string
	switch v := doc.(type) {
	case nil:
	case string:
		s = v
	case jsontext.Number:
		s = v.String()
	default:
		js, _ := jsontext.Append(nil, v)
		return CPUAmount{}, fmt.Errorf("want a string or number, got %s", js)
	}
	return ParseCPUAmount(s)
}

// ParseCPUAmount parses "cpuset:LIST", "exclude-cpuset:LIST" or a quantity
// (ParseMilliCPU). A cpuset form must name at least one CPU.
func ParseCPUAmount(s string) (CPUAmount, error) {
	for _, p := range []struct {
		prefix string
		kind   Kind
	}{{PrefixCPUSet, CPUSet}, {PrefixExcludeCPUSet, ExcludeCPUSet}} {
		if list, ok := strings.CutPrefix(s, p.prefix); ok {
			set, err := cpuset.Parse(list)
			if err != nil {
				return CPUAmount{}, fmt.Errorf("%q: want a CPU list after %q (e.g. %s0-3): %w", s, p.prefix, p.prefix, err)
			}
			if set.IsEmpty() {
				return CPUAmount{}, fmt.Errorf("%q names no CPUs: want a non-empty CPU list after %q (e.g. %s0-3)", s, p.prefix, p.prefix)
			}
			return CPUAmount{Kind: p.kind, Set: set}, nil
		}
	}
	milli, err := ParseMilliCPU(s)
	if err != nil {
		return CPUAmount{}, err
	}
	return CPUAmount{Kind: Quantity, Milli: milli}, nil
}

// ParseMilliCPU parses a CPU quantity in the forms a CPU request is written
// in: whole or decimal CPUs ("2", "0.5") or milli-CPU ("750m"), at most
// MaxMilliCPU and no finer than 1m.
func ParseMilliCPU(s string) (int64, error) {
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
	if milli > MaxMilliCPU {
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
