package topologyaware

import (
	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// adoptMixed takes back mixed grants (whole CPUs of their own plus a pool's
// shared CPUs), after the exclusive ones and before the shared ones. The
// journal holds only the union X = E ∪ S, so the exclusive part E is
// recovered as X − S for the first S that fits among the other containers'
// cpusets (a shared container of the pool has exactly S; two mixed grants
// of one pool share exactly S). When no container reveals S, no running
// container can tell which of X's CPUs are the exclusive ones: E is then
// chosen as a placement would pack it. Those that fit nowhere are returned
// with rest, to be kept as they are.
func (s *state) adoptMixed(byPod map[string]*abi.PodSandbox, mixed, rest []*abi.Container) []*abi.Container {
	if len(mixed) == 0 {
		return rest
	}
	var hints []cpuset.Set
	seen := map[string]bool{}
	hint := func(set cpuset.Set) {
		if k := set.String(); !set.IsEmpty() && !seen[k] {
			seen[k] = true
			hints = append(hints, set)
		}
	}
	for _, spec := range rest {
		if set, err := cpuset.Parse(spec.GetAssignment().GetCpusetCpus()); err == nil {
			hint(set)
		}
	}
	xs := make([]cpuset.Set, len(mixed))
	for i, spec := range mixed {
		xs[i], _ = cpuset.Parse(spec.GetAssignment().GetCpusetCpus())
	}
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			hint(xs[i].Intersection(xs[j]))
		}
	}
	for i, spec := range mixed {
		pod := byPod[spec.GetPodSandboxId()]
		req := s.cfg.classify(pod, spec)
		x, mems := xs[i], spec.GetAssignment().GetCpusetMems()
		p := s.poolHolding(x, mems)
		// A mixed grant's whole CPUs may be isolated ones (a single
		// core, preferIsolatedCPUs): those are its exclusive part.
		e := x.Intersection(s.res.isolated)
		iso := !e.IsEmpty()
		if p == nil || !x.Difference(e).IsSubsetOf(p.sharedSet()) || iso && (e.Size() != req.cores || e.Intersects(s.exclusive)) {
			rest = append(rest, spec)
			continue
		}
		ok := iso
		for _, h := range hints {
			if ok {
				break
			}
			if h.IsSubsetOf(x) && x.Size()-h.Size() == req.cores {
				e, ok = x.Difference(h), true
				break
			}
		}
		if !ok {
			e, ok = s.ix.pick(x, req.cores, nil)
		}
		if !ok || e.Size() == x.Size() {
			policy.Log.Warnf("container %s: cpuset %s holds no mixed grant of %d CPUs; kept as it is", spec.GetId(), x, req.cores)
			rest = append(rest, spec)
			continue
		}
		c := s.adopted(pod, spec, kindMixed)
		c.cpus, c.cpusText, c.milli, c.pool, c.isolated = e, e.String(), req.milli, p, iso
		s.add(c)
		if c.pinCPU {
			// What it runs with; a later grant of this loop shrinks the
			// shared part add saw. Should the guess be wrong, the next
			// updates tell it.
			c.sent = x.String()
			s.markChanged(p)
		}
	}
	return rest
}
