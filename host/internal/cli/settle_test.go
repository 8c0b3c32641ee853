package cli

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// TestSettlerSettlesOnceABurstIsOver feeds the settler a made-up allocation
// count: it settles at the first quiet tick after a burst, not during one,
// not for allocations below a burst's size however long they add up to less,
// and counts a new burst from what settling itself allocated.
func TestSettlerSettlesOnceABurstIsOver(t *testing.T) {
	var allocated uint64 = 100 << 20
	settled := 0
	s := newSettler(func() uint64 { return allocated }, func() {
		settled++
		allocated += 512 << 10 // a collection allocates a little
	})
	steps := []struct {
		what  string
		alloc uint64 // allocated during the tick
		want  bool   // settles at its end
	}{
		{"idle", 0, false},
		{"a scrape", 300 << 10, false},
		{"a burst begins", settleBurst / 2, false},
		{"the burst goes on", settleBurst, false},
		{"the burst is over", 100 << 10, true},
		{"idle after settling", 0, false},
		{"scrapes after settling", settleQuiet - 1, false},
		{"scrapes after settling", settleQuiet - 1, false},
		{"a small burst", 2 * settleQuiet, false},
		{"quiet after the small burst", 0, false},
		{"a second burst", settleBurst, false},
		{"quiet after the second burst", 0, true},
	}
	for i, st := range steps {
		allocated += st.alloc
		before := settled
		if got := s.tick(); got != st.want || settled-before != map[bool]int{true: 1}[st.want] {
			t.Fatalf("tick %d (%s): settled %v (%d times in all), want %v", i, st.what, got, settled, st.want)
		}
	}
}

// TestSettleAfterBurstsCollects runs the agent's settling loop in this
// process over a burst of garbage: once the burst is over, the loop forces a
// collection (debug.FreeOSMemory's), which it would never do without the
// Go runtime's count of allocated bytes (runtime/metrics).
func TestSettleAfterBurstsCollects(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { settleAfterBursts(ctx, logr.Discard()); close(done) }()
	defer func() { cancel(); <-done }()
	time.Sleep(10 * time.Millisecond) // the loop counts from its start
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var keep []byte
	for range 2 * settleBurst >> 20 { // garbage, 1 MiB at a time
		keep = make([]byte, 1<<20)
		keep[0] = 1
	}
	runtime.KeepAlive(keep)
	guard := time.Now().Add(time.Minute) // a guard, not a measure: settling takes a tick or two
	for {
		time.Sleep(100 * time.Millisecond)
		var now runtime.MemStats
		runtime.ReadMemStats(&now)
		if now.NumForcedGC > before.NumForcedGC {
			return
		}
		if time.Now().After(guard) {
			t.Fatalf("no forced collection a minute after a burst of %d MiB", 2*settleBurst>>20)
		}
	}
}
