package shadow_test

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/shadow"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/internal/testkit"
)

// TestOptionsRefuseBadValues: a missing input or a bad option value is New's
// error, naming it and its limit, instead of a default kept silently.
func TestOptionsRefuseBadValues(t *testing.T) {
	topo := &abi.Topology{Cpus: []*abi.CPU{{Id: 0}}}
	limits, err := validate.New(topo)
	if err != nil {
		t.Fatal(err)
	}
	load := (&nativePolicy{}).load
	snap := func() (*abi.RestoreState, uint64) { return &abi.RestoreState{}, 0 }
	for _, tc := range []struct {
		name   string
		topo   *abi.Topology
		limits *validate.Limits
		snap   func() (*abi.RestoreState, uint64)
		opt    shadow.Option
		want   string
	}{
		{"", topo, limits, snap, shadow.WithQueue(1), "name: empty"},
		{"next", nil, limits, snap, shadow.WithQueue(1), "topology: nil"},
		{"next", topo, nil, snap, shadow.WithQueue(1), "limits: nil"},
		{"next", topo, limits, nil, shadow.WithQueue(1), "snapshot: nil"},
		{"next", topo, limits, snap, shadow.WithQueue(0), "queue 0: must be at least 1"},
		{"next", topo, limits, snap, shadow.WithKeep(-1), "keep -1: must be at least 1"},
		{"next", topo, limits, snap, shadow.WithMaxFailures(0), "max failures 0: must be between 1 and 100"},
		{"next", topo, limits, snap, shadow.WithMaxFailures(shadow.FailureWindow + 1), "max failures 101: must be between 1 and 100"},
		{"next", topo, limits, snap, shadow.WithMetrics(nil), "metrics: nil"},
	} {
		if s, err := shadow.New(tc.name, load, tc.topo, tc.limits, tc.snap, tc.opt); err == nil || s != nil {
			t.Errorf("New = %v, %v; want an error with %q", s, err, tc.want)
		} else {
			testkit.ErrorContains(t, err, tc.want)
		}
	}
	if _, err := shadow.New("next", nil, topo, limits, snap); err == nil {
		t.Error("New without load succeeded")
	} else {
		testkit.ErrorContains(t, err, "load: nil")
	}
}
