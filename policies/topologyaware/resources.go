package topologyaware

import (
	"errors"
	"fmt"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/sdk/go/kit/quantity"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// resources is a configuration resolved against the topology.
type resources struct {
	// available: the CPUs the policy hands out (online ∩ availableResources).
	available cpuset.Set
	// isolated: the available kernel-isolated CPUs; only exclusive grants use them.
	isolated cpuset.Set
	// reserved: the CPUs of reserved-namespace containers, ⊆ available.
	reserved cpuset.Set
	// reservedMilli: the reserved capacity (the quantity, or 1000 per CPU).
	reservedMilli int64
}

const (
	fieldAvailable = ".availableResources.cpu"
	fieldReserved  = ".reservedResources.cpu"
)

// resolve checks cfg against the topology and picks the CPUs it names.
// claimed are CPUs that prepared claims hold (after a restart, see
// avoidClaimed): the reserved CPUs are picked around them. A refused
// availableResources and reservedResources are both in the one error.
func resolve(cfg Config, ix *topoIndex, claimed cpuset.Set) (resources, error) {
	var r resources
	var errs policyconfig.Errors
	if err := r.resolveAvailable(cfg.AvailableCPU, ix); err != nil {
		errs.Add(policyconfig.Root+fieldAvailable, "%s", err)
		// The reserved CPUs are picked from the available ones, which are
		// unknown: only what refuses a reservation whatever they are is
		// checked.
		if err := checkReserved(cfg.ReservedCPU, ix); err != nil {
			errs.Add(policyconfig.Root+fieldReserved, "%s", err)
		}
		return r, errs.Err()
	}
	if err := r.resolveReserved(cfg.ReservedCPU, ix, claimed); err != nil {
		errs.Add(policyconfig.Root+fieldReserved, "%s", err)
	}
	return r, errs.Err()
}

// resolveAvailable picks the available and isolated CPUs, or says why a
// (availableResources.cpu) is refused.
func (r *resources) resolveAvailable(a quantity.CPUAmount, ix *topoIndex) error {
	switch a.Kind {
	case quantity.Absent:
		r.available = ix.online
	case quantity.CPUSet:
		if out := a.Set.Difference(ix.online); !out.IsEmpty() {
			return fmt.Errorf("CPUs %s are not online (online: %s)", out, ix.online)
		}
		r.available = a.Set
	case quantity.ExcludeCPUSet:
		if out := a.Set.Difference(ix.online); !out.IsEmpty() {
			return fmt.Errorf("CPUs %s are not online (online: %s)", out, ix.online)
		}
		r.available = ix.online.Difference(a.Set)
	case quantity.Quantity:
		if a.Milli%1000 != 0 || a.Milli == 0 {
			return fmt.Errorf("%s: available CPU must be a whole number of CPUs or a cpuset", a)
		}
		set, ok := ix.pick(ix.online, int(a.Milli/1000), nil)
		if !ok {
			return fmt.Errorf("%s: only %d CPUs are online", a, ix.online.Size())
		}
		r.available = set
	}
	if r.available.IsEmpty() {
		return errors.New("leaves no CPU available")
	}
	r.isolated = r.available.Intersection(ix.isolated)
	return nil
}

// checkReserved says why a (reservedResources.cpu) is refused whatever the
// available CPUs are: an amount of none, or CPUs that are not online.
func checkReserved(a quantity.CPUAmount, ix *topoIndex) error {
	switch a.Kind {
	case quantity.CPUSet:
		if out := a.Set.Difference(ix.online); !out.IsEmpty() {
			return fmt.Errorf("CPUs %s are not online (online: %s)", out, ix.online)
		}
	case quantity.Quantity:
		if a.Milli <= 0 {
			return errors.New("some CPU must be reserved")
		}
	}
	return nil
}

// resolveReserved picks the reserved CPUs from the available ones, or says
// why a (reservedResources.cpu) is refused.
func (r *resources) resolveReserved(a quantity.CPUAmount, ix *topoIndex, claimed cpuset.Set) error {
	switch a.Kind {
	case quantity.CPUSet, quantity.ExcludeCPUSet:
		r.reserved = a.Set
		if a.Kind == quantity.ExcludeCPUSet {
			r.reserved = r.available.Difference(a.Set)
		}
		if out := r.reserved.Difference(r.available); !out.IsEmpty() {
			return fmt.Errorf("CPUs %s are not available (available: %s)", out, r.available)
		}
		if iso := r.reserved.Intersection(r.isolated); !iso.IsEmpty() && (!iso.Equal(r.reserved) || iso.Size() > 1) {
			return fmt.Errorf("reserved CPUs %s include isolated CPUs %s: reserve one isolated CPU alone or none", r.reserved, iso)
		}
		r.reservedMilli = 1000 * int64(r.reserved.Size())
	case quantity.Quantity:
		if a.Milli <= 0 {
			return errors.New("some CPU must be reserved")
		}
		from := r.available.Difference(r.isolated)
		n := int((a.Milli + 999) / 1000)
		whole := ix.idlePackages(from, n)
		// Normal-priority CPUs first, as nri-plugins reserves them
		// (allocateReservedCPUs asks its allocator for normalPrio).
		set, ok := ix.pickPrio(from.Difference(whole), n-whole.Size(), nil, prioNormal)
		set = set.Union(whole)
		if !ok {
			return fmt.Errorf("cannot reserve %s: %d CPUs are available and not isolated", a, from.Size())
		}
		r.reserved, r.reservedMilli = set, a.Milli
	}
	r.avoidClaimed(ix, claimed)
	if r.reserved.IsEmpty() {
		return errors.New("some CPU must be reserved")
	}
	if !r.leavesShared(r.reserved) {
		return fmt.Errorf("reserving %s leaves no shared CPU (available: %s, isolated: %s)", r.reserved, r.available, r.isolated)
	}
	return nil
}

// avoidClaimed moves the reserved CPUs that prepared claims hold to as many
// other available, unclaimed CPUs, picked as a reserved amount is. Only a
// restart meets such a claim (a live change and a swap that would do this
// are refused): its container runs there, and its CPUs stay its own until it
// is released; the configured set is back at the next restart or
// reconfiguration after that. When no CPU can replace them the reserved set
// stays as configured and the claim is kept unaccounted (adoptClaims).
func (r *resources) avoidClaimed(ix *topoIndex, claimed cpuset.Set) {
	held := r.reserved.Intersection(claimed)
	if held.IsEmpty() {
		return
	}
	from := r.available.Difference(r.reserved).Difference(r.isolated).Difference(claimed)
	set, ok := ix.pickPrio(from, held.Size(), nil, prioNormal)
	moved := r.reserved.Difference(held).Union(set)
	if !ok || !r.leavesShared(moved) {
		return
	}
	policy.Log.Warnf("reserved CPUs %s are held by prepared claims: reserving %s in their place until the claims are released and the configuration is applied again", held, set)
	r.reserved = moved
}

// leavesShared tells whether reserving reserved leaves some available CPU
// that is not isolated, for the shared pool.
func (r *resources) leavesShared(reserved cpuset.Set) bool {
	return !r.available.Difference(reserved).Difference(r.isolated).IsEmpty()
}

// idlePackages takes whole packages out of from, as nri-plugins' CPU
// allocator does first (pkg/cpuallocator, takeIdlePackages): in package id
// order, every package whose online CPUs are all in from and number at most
// what is still wanted of n. On a VM with CPUs hot-plugged one to a package,
// that is where a small reservation goes.
func (ix *topoIndex) idlePackages(from cpuset.Set, n int) cpuset.Set {
	byPkg := map[uint32][]uint32{}
	for _, id := range ix.online.Sorted() {
		byPkg[ix.cpus[id].pkg] = append(byPkg[ix.cpus[id].pkg], id)
	}
	var taken cpuset.Set
	for _, pkg := range sortedNodes(byPkg) {
		cpus := cpuset.New(byPkg[pkg]...)
		if cpus.Size() <= n-taken.Size() && cpus.IsSubsetOf(from) {
			taken = taken.Union(cpus)
		}
	}
	return taken
}
