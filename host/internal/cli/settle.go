package cli

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/go-logr/logr"
)

// The agent settles once a burst of work is over: it collects the burst's
// garbage, returns the free heap to the OS and drops the executable's pages
// the burst touched, so that its steady RSS is what it keeps, not what a
// burst of 1,000 containers passed through (docs/performance.md, "The real
// agent with 1,000 containers"; host/internal/cli/RATIONALE.md).
const (
	// settleTick is how often the agent looks at what it allocated.
	settleTick = time.Second
	// settleBurst is how much the agent must have allocated since it last
	// settled for a burst to be worth a collection (some 100 containers'
	// decisions); an idle agent scraped every 15 s allocates as much in
	// tens of minutes.
	settleBurst = 8 << 20
	// settleQuiet is the most the agent may allocate in one tick and still
	// count as quiet (scrapes of /metrics and the guest's idle work stay
	// below it).
	settleQuiet = 1 << 20
)

// settler decides when the agent settles: after settleBurst bytes were
// allocated since the last time, at the first tick that allocated less than
// settleQuiet.
type settler struct {
	allocated func() uint64 // bytes allocated since the process started
	settle    func()

	last, prev uint64 // allocated at the last settle, at the last tick
}

// newSettler starts counting from now.
func newSettler(allocated func() uint64, settle func()) *settler {
	n := allocated()
	return &settler{allocated: allocated, settle: settle, last: n, prev: n}
}

// tick looks at what was allocated since the last tick and settles when a
// burst is over; it reports whether it did.
func (s *settler) tick() bool {
	now := s.allocated()
	quiet := now-s.prev < settleQuiet
	s.prev = now
	if !quiet || now-s.last < settleBurst {
		return false
	}
	s.settle()
	s.last = s.allocated() // what settling allocated is not a new burst
	s.prev = s.last
	return true
}

// heapAllocated is the Go runtime's count of bytes allocated on the heap
// since the process started (runtime/metrics; reading it stops nothing).
func heapAllocated() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0 // not in this Go: the agent never settles after a burst
	}
	return sample[0].Value.Uint64()
}

// settleAfterBursts runs until ctx ends: every settleTick it checks whether a
// burst of work is over, and if so collects the garbage, returns the free
// heap to the OS (debug.FreeOSMemory) and drops the executable's pages from
// the page tables (releaseExecutable), logging what it released.
func settleAfterBursts(ctx context.Context, log logr.Logger) {
	s := newSettler(heapAllocated, func() {
		start := time.Now()
		debug.FreeOSMemory()
		n, err := releaseExecutable()
		if err != nil {
			log.Error(err, "settling after a burst of work: the executable's pages stay resident")
		}
		log.V(1).Info("settled after a burst of work", "took", time.Since(start), "executableMiB", float64(n)/(1<<20))
	})
	t := time.NewTicker(settleTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.tick()
		}
	}
}
