package state

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/nriwasm/nriwasm/host/validate"
)

// Check holds the journal's assignments to the node's limits, as if the
// policy had just answered them: a checkpoint restored on a node whose CPUs,
// NUMA nodes or the host's checks have changed (or one written by hand) must
// not hand the policy, or the runtime, what would be refused today. An
// assignment that fails is dropped (its container stays journaled, as one the
// policy did not place) and named in the returned error; nil when all pass.
func (j *Journal) Check(l *validate.Limits) error {
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(j.containers)) {
		c := j.containers[id]
		if c.GetAssignment() == nil {
			continue
		}
		if err := l.Adjustment(c.GetAssignment()); err != nil {
			errs = append(errs, fmt.Errorf("container %q: assignment dropped: %w", id, err))
			c.Assignment = nil
			j.mark(kindContainer, id)
		}
	}
	return errors.Join(errs...)
}
