package nri_test

import (
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/host/nri"
	"github.com/nriwasm/nriwasm/internal/testkit"
)

// TestOptionsRefuseBadValues: a missing input or a bad option value is New's
// error, naming it and its limit, instead of a default kept silently.
func TestOptionsRefuseBadValues(t *testing.T) {
	for _, tc := range []struct {
		socket, name, index string
		opt                 nri.Option
		want                string
	}{
		{"", "nriwasm", "90", nri.WithLogger(testLogger()), "socket path: empty"},
		{"/run/nri.sock", "", "90", nri.WithLogger(testLogger()), "plugin name: empty"},
		{"/run/nri.sock", "nriwasm", "", nri.WithLogger(testLogger()), "plugin index: empty"},
		{"/run/nri.sock", "nriwasm", "90", nri.WithBackoff(0, time.Second), "backoff 0s to 1s: min must be positive"},
		{"/run/nri.sock", "nriwasm", "90", nri.WithBackoff(time.Second, time.Millisecond), "max at least min"},
		{"/run/nri.sock", "nriwasm", "90", nri.WithMetrics(nil), "metrics: nil"},
		{"/run/nri.sock", "nriwasm", "90", nri.WithLocator(nil), "locator: nil"},
		{"/run/nri.sock", "nriwasm", "90", nri.WithDialer(nil), "dialer: nil"},
	} {
		if p, err := nri.New(nil, tc.socket, tc.name, tc.index, tc.opt); err == nil || p != nil {
			t.Errorf("New = %v, %v; want an error with %q", p, err, tc.want)
		} else {
			testkit.ErrorContains(t, err, tc.want)
		}
	}
	if _, err := nri.New(nil, "/run/nri.sock", "nriwasm", "90", nri.WithBackoff(time.Millisecond, time.Millisecond)); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
}
