package quantity_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/sdk/go/kit/jsontext"
	"github.com/nriwasm/nriwasm/sdk/go/kit/quantity"
)

func TestParseMilliCPU(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"2", 2000, ""}, {"0.5", 500, ""}, {".5", 500, ""}, {"1.250", 1250, ""}, {"750m", 750, ""}, {"1.0m", 1, ""},
		{"1000000", quantity.MaxMilliCPU / 1000 * 1000, ""},
		{"", 0, "not a number"}, {"m", 0, "not a number"}, {"1.", 0, "not a number"}, {"-1", 0, "not a number"},
		{"2k", 0, "not a number"}, {"0.0005", 0, "finer than 1m"}, {"1.5m", 0, "finer than 1m"},
		{"1000001", 0, "too large"}, {"12345678901", 0, "too large"},
	} {
		got, err := quantity.ParseMilliCPU(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseMilliCPU(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), `"`+tc.in+`"`)):
			t.Errorf("ParseMilliCPU(%q) = %d, %v; want an error naming the input with %q", tc.in, got, err, tc.err)
		}
	}
}

func TestCPUAmountJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind quantity.Kind
		back string
		err  string
	}{
		{`"750m"`, quantity.Quantity, "750m", ""},
		{`2`, quantity.Quantity, "2", ""},
		{`1.5`, quantity.Quantity, "1500m", ""},
		{`"cpuset:0-3,8"`, quantity.CPUSet, "cpuset:0-3,8", ""},
		{`"exclude-cpuset:15"`, quantity.ExcludeCPUSet, "exclude-cpuset:15", ""},
		{`"cpuset:"`, 0, "", "names no CPUs"},
		{`"cpuset:0-x"`, 0, "", `after "cpuset:"`},
		{`true`, 0, "", "want a string or number"},
		{`{"a":[1]}`, 0, "", "want a string or number"},
		{`"lots"`, 0, "", "not a number"},
	} {
		var a quantity.CPUAmount
		err := json.Unmarshal([]byte(tc.in), &a)
		// CPUAmountFromJSON reads the parsed value the same way.
		doc, perr := jsontext.Parse([]byte(tc.in))
		if perr != nil {
			t.Fatal(perr)
		}
		if b, berr := quantity.CPUAmountFromJSON(doc); b.String() != a.String() || b.Kind != a.Kind || fmt.Sprint(berr) != fmt.Sprint(err) {
			t.Errorf("%s: CPUAmountFromJSON %+v, %v; UnmarshalJSON %+v, %v", tc.in, b, berr, a, err)
		}
		switch {
		case tc.err == "" && (err != nil || a.Kind != tc.kind || a.String() != tc.back):
			t.Errorf("%s: %+v (%q), %v; want kind %d, %q", tc.in, a, a.String(), err, tc.kind, tc.back)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %+v, %v; want an error with %q", tc.in, a, err, tc.err)
		}
	}
	if s := (quantity.CPUAmount{}).String(); s != "" {
		t.Errorf("absent amount writes %q", s)
	}
	if (quantity.CPUAmount{Kind: quantity.Quantity}).IsSet() || !(quantity.CPUAmount{Kind: quantity.ExcludeCPUSet}).IsSet() {
		t.Error("IsSet: want false for a quantity, true for exclude-cpuset")
	}
}
