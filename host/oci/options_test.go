package oci

import (
	"context"
	"testing"

	"github.com/nriwasm/nriwasm/host/oci/signature"
	"github.com/nriwasm/nriwasm/internal/testkit"
)

// TestOptionsRefuseBadValues: a bad option value is NewFetcher's error,
// naming the option and its limit, instead of a default kept silently.
func TestOptionsRefuseBadValues(t *testing.T) {
	for _, tc := range []struct {
		opt  Option
		want string
	}{
		{WithRemote(Remote{PlainHTTP: []string{"localhost:5000", ""}}), "plain HTTP registry 1: empty"},
		{WithCacheDir(""), "cache directory: empty"},
		{WithVerification("strict", nil), `verification mode "strict": want "off", "warn" or "enforce"`},
		{WithVerification(signature.Enforce, nil), "verification mode enforce needs at least one public key"},
		{WithVerification(signature.Warn, nil), "verification mode warn needs at least one public key"},
		{WithTimeout(0), "timeout 0s: must be positive"},
	} {
		if f, err := NewFetcher(context.Background(), tc.opt); err == nil || f != nil {
			t.Errorf("NewFetcher = %v, %v; want an error with %q", f, err, tc.want)
		} else {
			testkit.ErrorContains(t, err, tc.want)
		}
	}
	if _, err := NewFetcher(context.Background(), WithVerification(signature.Off, nil), WithCacheDir(t.TempDir())); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
}
