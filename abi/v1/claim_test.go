package v1_test

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func TestSameResults(t *testing.T) {
	alloc := func(devs ...string) *abi.Claim {
		c := &abi.Claim{Uid: "u"}
		for _, d := range devs {
			c.Results = append(c.Results, &abi.DeviceAllocation{Device: d})
		}
		return c
	}
	for _, tc := range []struct {
		a, b *abi.Claim
		want bool
	}{
		{alloc("x", "y"), alloc("x", "y"), true},
		{alloc(), nil, true},
		{alloc("x", "y"), alloc("y", "x"), false},
		{alloc("x"), alloc("x", "y"), false},
		{alloc("x"), alloc("z"), false},
	} {
		if got := abi.SameResults(tc.a, tc.b); got != tc.want {
			t.Errorf("SameResults(%v, %v) = %v, want %v", tc.a.GetResults(), tc.b.GetResults(), got, tc.want)
		}
	}
}
