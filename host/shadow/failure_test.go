package shadow_test

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/shadow"
)

// TestTrappingShadowIsDropped: a shadow whose every CreateContainer traps is
// rebuilt after each failure and dropped after MaxFailures in a row; the
// active answers are those without a shadow, and requests after the drop
// still get them.
func TestTrappingShadowIsDropped(t *testing.T) {
	alone := newRig(t, reserveOne, nil, "")
	var want []string
	for _, id := range []string{"c0", "c1", "c2", "c3", "c4"} {
		want = append(want, alone.create(t, id, 0))
	}

	sp := &nativePolicy{trap: func(m abi.Method) bool { return m == abi.Method_METHOD_CREATE_CONTAINER }}
	r := newRig(t, reserveOne, sp, reserveOne, shadow.WithMaxFailures(3))
	var got []string
	for i, id := range []string{"c0", "c1"} {
		got = append(got, r.create(t, id, 0))
		r.waitFor(t, "a rebuild", func(rep shadow.Report) bool { return rep.Resyncs == uint64(i+1) })
	}
	got = append(got, r.create(t, "c2", 0))
	rep := r.waitFor(t, "the shadow dropped", func(rep shadow.Report) bool { return rep.State == shadow.StateDropped })
	for _, id := range []string{"c3", "c4"} {
		got = append(got, r.create(t, id, 0))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("with a trapping shadow the active policy answered %q, alone %q", got, want)
	}
	if rep.Failures != 3 || rep.Resyncs != 2 || rep.Divergences != 0 {
		t.Fatalf("report %+v: want 3 failures, 2 rebuilds before the drop, no divergence", rep)
	}
	if rep.Reason == "" {
		t.Fatal("a dropped shadow's report says no reason")
	}
	if got := counter(t, r, "nriwasm_shadow_compared_total", "CreateContainer"); got != 0 {
		t.Fatalf("nriwasm_shadow_compared_total{method=CreateContainer} = %v, want 0", got)
	}
}

// TestShadowRebuiltAfterATrap: a shadow that traps once is rebuilt from the
// active journal, with the containers the active policy placed meanwhile, and
// agrees again afterwards.
func TestShadowRebuiltAfterATrap(t *testing.T) {
	var traps atomic.Int32
	traps.Store(1)
	sp := &nativePolicy{trap: func(m abi.Method) bool { return m == abi.Method_METHOD_CREATE_CONTAINER && traps.Add(-1) >= 0 }}
	r := newRig(t, reserveOne, sp, reserveOne)
	r.create(t, "c0", 500)
	r.waitFor(t, "a rebuild", func(rep shadow.Report) bool { return rep.Resyncs == 1 })
	r.create(t, "c1", 500)
	rep := r.waitFor(t, "c1 compared", func(rep shadow.Report) bool {
		cc := rep.Methods["CreateContainer"]
		return cc != nil && cc.Compared == 1
	})
	if rep.State != shadow.StateRunning || rep.Failures != 1 || rep.Resyncs != 1 || rep.Divergences != 0 {
		t.Fatalf("report %+v: want running, 1 failure, 1 rebuild, no divergence", rep)
	}
	restored := sp.lastInit().GetRestore().GetContainers()
	if len(restored) != 1 || restored[0].GetId() != "c0" || restored[0].GetAssignment().GetCpusetCpus() == "" {
		t.Fatalf("the rebuilt shadow was restored with %v, want c0 with the active policy's cpuset", restored)
	}
}

// TestFullQueueResyncs: a shadow that falls behind (its queue holds three
// requests) never holds up the active policy: requests are dropped, counted,
// and the shadow is rebuilt from the active journal, skipping what it missed.
func TestFullQueueResyncs(t *testing.T) {
	sp := &nativePolicy{gate: make(chan struct{}), arrived: make(chan struct{})}
	r := newRig(t, reserveOne, sp, reserveOne, shadow.WithQueue(3))
	r.create(t, "c0", 0)
	<-sp.arrived // the shadow is answering c0
	for _, id := range []string{"c1", "c2", "c3"} {
		r.create(t, id, 0) // these would block if the active path waited for the shadow
	}
	close(sp.gate)
	r.waitFor(t, "a rebuild", func(rep shadow.Report) bool { return rep.Resyncs == 1 })
	r.create(t, "c4", 0)
	rep := r.waitFor(t, "c0 and c4 compared", func(rep shadow.Report) bool {
		cc := rep.Methods["CreateContainer"]
		return cc != nil && cc.Compared == 2
	})
	if rep.Dropped == 0 || rep.Divergences != 0 || rep.Failures != 0 {
		t.Fatalf("report %+v: want drops, no divergence, no failure", rep)
	}
	restored := sp.lastInit().GetRestore().GetContainers()
	if len(restored) != 4 {
		t.Fatalf("the resynchronized shadow was restored with %d containers, want the 4 placed before it caught up", len(restored))
	}
}

// TestShadowMovesToCompiledCode: a shadow started on the interpreter moves
// to its compiled code once the background compile is done, restored from
// the active journal as it is then, and goes on comparing without a
// divergence.
func TestShadowMovesToCompiledCode(t *testing.T) {
	sp := &nativePolicy{compiling: make(chan error, 1)}
	r := newRig(t, reserveOne, sp, reserveOne)
	r.create(t, "c0", 500)
	r.waitFor(t, "c0 compared", func(rep shadow.Report) bool {
		cc := rep.Methods["CreateContainer"]
		return cc != nil && cc.Compared == 1
	})
	sp.compiling <- errors.New("child process killed")
	close(sp.compiling)
	deadline := time.Now().Add(time.Minute)
	for sp.promoted() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the shadow did not move to its compiled code")
		}
		time.Sleep(5 * time.Millisecond)
	}
	restored := sp.lastInit().GetRestore().GetContainers()
	if len(restored) != 1 || restored[0].GetId() != "c0" {
		t.Fatalf("the compiled shadow was restored with %v, want c0", restored)
	}
	r.create(t, "c1", 500)
	rep := r.waitFor(t, "c1 compared", func(rep shadow.Report) bool {
		cc := rep.Methods["CreateContainer"]
		return cc != nil && cc.Compared == 2
	})
	if rep.State != shadow.StateRunning || rep.Divergences != 0 || rep.Failures != 0 {
		t.Fatalf("report %+v: want running, no divergence, no failure", rep)
	}
}
