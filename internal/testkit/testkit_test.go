package testkit_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

// recorder is a testing.TB whose Fatalf records the failure and stops
// the helper's goroutine, as the real one does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}

// run calls f with a recorder and returns what it failed with, if anything.
func run(t *testing.T, f func(tb testing.TB)) (failed string) {
	r := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	f(r)
	return ""
}

// TestEventually: a condition that comes true after a few polls passes.
func TestEventually(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			time.Sleep(testkit.PollInterval)
			n.Add(1)
		}
	}()
	if failed := run(t, func(tb testing.TB) { testkit.Eventually(tb, "three ticks", func() bool { return n.Load() == 3 }) }); failed != "" {
		t.Errorf("Eventually failed: %s", failed)
	}
}

// TestRequirements: each passes what it requires and fails the rest,
// saying what differed.
func TestRequirements(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(tb testing.TB)
		want string // a part of the failure; "" to pass
	}{
		{"equal", func(tb testing.TB) { testkit.Equal(tb, 2, 2) }, ""},
		{"unequal", func(tb testing.TB) { testkit.Equal(tb, "a", "b") }, "got a, want b"},
		{"error holds all", func(tb testing.TB) { testkit.ErrorContains(tb, errors.New("config.x: too big"), "config.x", "big") }, ""},
		{"no error", func(tb testing.TB) { testkit.ErrorContains(tb, nil, "x") }, "no error"},
		{"error lacks a part", func(tb testing.TB) { testkit.ErrorContains(tb, errors.New("bad"), "config.x") }, `does not hold "config.x"`},
		{"equal protos", func(tb testing.TB) { testkit.EqualProto(tb, durationpb.New(time.Second), durationpb.New(time.Second)) }, ""},
		{"unequal protos", func(tb testing.TB) {
			testkit.EqualProto(tb, durationpb.New(time.Second), durationpb.New(2*time.Second))
		}, "seconds:"},
	} {
		failed := run(t, tc.f)
		if (tc.want == "") != (failed == "") || !strings.Contains(failed, tc.want) {
			t.Errorf("%s: failed with %q, want %q", tc.name, failed, tc.want)
		}
	}
}
