package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Quantity is a size in bytes, written as a Kubernetes-style quantity: an integer
// with an optional binary (Ki, Mi, Gi, Ti) or decimal (k, M, G, T) suffix, or a
// plain number of bytes.
type Quantity uint64

var quantityRE = regexp.MustCompile(`^([0-9]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$`)

var quantityUnits = map[string]uint64{
	"": 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
	"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
}

// ParseQuantity parses "256Mi", "1G" or "65536".
func ParseQuantity(s string) (Quantity, error) {
	m := quantityRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a quantity: want an integer with an optional suffix Ki, Mi, Gi, Ti, k, M, G or T", s)
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	unit := quantityUnits[m[2]]
	if err != nil || n > (1<<63)/unit {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return Quantity(n * unit), nil
}

// String writes q with the largest binary suffix that divides it ("256Mi").
func (q Quantity) String() string {
	for _, s := range []string{"Ti", "Gi", "Mi", "Ki"} {
		if u := quantityUnits[s]; q != 0 && uint64(q)%u == 0 {
			return strconv.FormatUint(uint64(q)/u, 10) + s
		}
	}
	return strconv.FormatUint(uint64(q), 10)
}

func (q Quantity) MarshalJSON() ([]byte, error) { return json.Marshal(q.String()) }

func (q *Quantity) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		s = string(data) // a plain number of bytes
	}
	v, err := ParseQuantity(s)
	if err != nil {
		return err
	}
	*q = v
	return nil
}

// Duration is a time.Duration written as a string Go's time.ParseDuration reads:
// "1s", "500ms", "1m30s".
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func (d *Duration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%s is not a duration: want a string such as \"1s\" or \"500ms\"", data)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration: want a string such as \"1s\" or \"500ms\"", s)
	}
	*d = Duration(v)
	return nil
}

// PluginIndex is an NRI plugin index: two digits, "00" to "99". A YAML number
// from 0 to 99 is accepted and padded ("5" → "05").
type PluginIndex string

func (p *PluginIndex) UnmarshalJSON(data []byte) error {
	var n int
	if err := json.Unmarshal(data, &n); err == nil {
		if n < 0 || n > 99 {
			return fmt.Errorf("%d is out of range: want two digits, 00 to 99", n)
		}
		*p = PluginIndex(fmt.Sprintf("%02d", n))
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%s is not a plugin index: want two digits, 00 to 99", data)
	}
	*p = PluginIndex(s)
	return nil
}

// FailurePolicy says what CreateContainer does when the policy fails.
type FailurePolicy string

const (
	// FailOpen starts the container without the policy's adjustment; the failure
	// is logged and counted.
	FailOpen FailurePolicy = "fail-open"
	// FailClosed fails the container's creation with the policy's error.
	FailClosed FailurePolicy = "fail-closed"
)

// RawConfig is the policy's configuration, never interpreted by the host. In the
// file it is either a string, kept verbatim, or any other YAML value, kept as
// its JSON encoding.
type RawConfig []byte

func (r RawConfig) MarshalJSON() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	if json.Valid(r) && !bytes.HasPrefix(bytes.TrimSpace(r), []byte(`"`)) {
		return r, nil
	}
	return json.Marshal(string(r))
}

func (r *RawConfig) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*r = nil
	case bytes.HasPrefix(data, []byte(`"`)):
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*r = RawConfig(s)
	case !json.Valid(data):
		return errors.New("invalid JSON")
	default:
		*r = RawConfig(bytes.Clone(data))
	}
	return nil
}
