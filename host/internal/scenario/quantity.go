package scenario

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
)

// quantityRE is Kubernetes' quantity syntax: a signed decimal number and a
// binary-SI, decimal-SI or exponent suffix.
var quantityRE = regexp.MustCompile(`^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$`)

var suffixes = map[string]*big.Rat{
	"": big.NewRat(1, 1), "n": big.NewRat(1, 1e9), "u": big.NewRat(1, 1e6), "m": big.NewRat(1, 1000),
	"k": pow(10, 3), "M": pow(10, 6), "G": pow(10, 9), "T": pow(10, 12), "P": pow(10, 15), "E": pow(10, 18),
	"Ki": pow(2, 10), "Mi": pow(2, 20), "Gi": pow(2, 30), "Ti": pow(2, 40), "Pi": pow(2, 50), "Ei": pow(2, 60),
}

func pow(base, exp int64) *big.Rat {
	return new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(base), big.NewInt(exp), nil))
}

// parseQuantity returns q's value as an exact rational, rejecting negative values.
func parseQuantity(q Quantity) (*big.Rat, error) {
	m := quantityRE.FindStringSubmatch(strings.TrimSpace(string(q)))
	if m == nil {
		return nil, fmt.Errorf("bad quantity %q: want a number with an optional suffix (500m, 2, 1Gi)", string(q))
	}
	v, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return nil, fmt.Errorf("bad quantity %q", string(q))
	}
	suffix := m[2]
	if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		var exp int64
		if _, err := fmt.Sscan(suffix[1:], &exp); err != nil || exp > 30 || exp < -30 {
			return nil, fmt.Errorf("bad quantity %q: exponent out of range", string(q))
		}
		if exp >= 0 {
			v.Mul(v, pow(10, exp))
		} else {
			v.Quo(v, pow(10, -exp))
		}
	} else {
		v.Mul(v, suffixes[suffix])
	}
	if v.Sign() < 0 {
		return nil, fmt.Errorf("bad quantity %q: negative", string(q))
	}
	return v, nil
}

// scaled returns q times scale, rounded up like Kubernetes' Value and MilliValue.
func scaled(q Quantity, scale int64) (int64, error) {
	v, err := parseQuantity(q)
	if err != nil {
		return 0, err
	}
	v.Mul(v, big.NewRat(scale, 1))
	n := new(big.Int).Quo(v.Num(), v.Denom())
	if new(big.Rat).SetInt(n).Cmp(v) < 0 {
		n.Add(n, big.NewInt(1))
	}
	if !n.IsInt64() || n.Int64() > math.MaxInt64/2 {
		return 0, fmt.Errorf("bad quantity %q: too large", string(q))
	}
	return n.Int64(), nil
}

// milliCPU is a CPU quantity in milli-CPU ("500m" → 500, "2" → 2000).
func milliCPU(q Quantity) (int64, error) { return scaled(q, 1000) }

// bytesOf is a memory quantity in bytes ("1Gi" → 1073741824).
func bytesOf(q Quantity) (int64, error) { return scaled(q, 1) }
