// Package testkit holds the helpers the module's tests share: one way to
// wait for a condition (Eventually) and one set of requirements (Equal,
// ErrorContains, EqualProto), so that every test polls and fails alike.
// host/RATIONALE.md says why one package, not one copy per test package.
//
// Only tests import it; it imports the standard library and protobuf.
package testkit

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// The polling of Eventually. The deadline is generous: a passing test
// never waits for it, and a loaded CI machine must not fail a slow one.
const (
	// PollInterval is how often Eventually tests its condition; benchmarks
	// that time with it see at most this much added.
	PollInterval = 5 * time.Millisecond
	// PollTimeout is how long Eventually waits before failing.
	PollTimeout = time.Minute
)

// Eventually polls cond every PollInterval until it holds, and fails tb
// (naming what it waited for) if it does not within PollTimeout.
func Eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(PollTimeout); !cond(); time.Sleep(PollInterval) {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up after %v waiting for %s", PollTimeout, what)
		}
	}
}

// Equal fails tb unless got == want.
func Equal[T comparable](tb testing.TB, got, want T) {
	tb.Helper()
	if got != want {
		tb.Fatalf("got %v, want %v", got, want)
	}
}

// ErrorContains fails tb unless err is an error whose message holds every
// part of want.
func ErrorContains(tb testing.TB, err error, want ...string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("no error, want one with %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			tb.Fatalf("error %q does not hold %q", err, w)
		}
	}
}

// EqualProto fails tb unless got and want are equal messages (proto.Equal),
// showing both in text form.
func EqualProto(tb testing.TB, got, want proto.Message) {
	tb.Helper()
	if !proto.Equal(got, want) {
		tb.Fatalf("got:\n%s\nwant:\n%s", prototext.Format(got), prototext.Format(want))
	}
}
