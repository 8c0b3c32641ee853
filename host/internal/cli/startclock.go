package cli

import (
	"time"

	"github.com/go-logr/logr"
)

// startClock times the steps of the agent's start: each step logs, at
// verbosity 1 (log.verbosity: 1), how long it took and how long the start
// has taken so far, so a slow start says where its time went
// (docs/performance.md, "Start").
type startClock struct {
	log         logr.Logger
	begin, last time.Time
}

// newStartClock starts the clock at begin.
func newStartClock(log logr.Logger, begin time.Time) *startClock {
	return &startClock{log: log, begin: begin, last: begin}
}

// step logs that the step named step ended now.
func (c *startClock) step(step string) {
	now := time.Now()
	c.log.V(1).Info("start step done", "step", step,
		"took", now.Sub(c.last).Round(10*time.Microsecond).String(),
		"sinceStart", now.Sub(c.begin).Round(10*time.Microsecond).String())
	c.last = now
}
