package topologyaware

import (
	"cmp"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// hasAssignment tells whether the host journaled what c was given.
func hasAssignment(c *abi.Container) bool {
	a := c.GetAssignment()
	return a.GetCpusetCpus() != "" || a.GetCpusetMems() != ""
}

// adoptAll takes running containers back with exactly the CPUs and memory
// nodes they were given, so nothing moves: claim holders and exclusive
// grants first, then mixed ones (these shape the shared CPUs), then claim
// holders with CPU of their own (their claims' CPUs and a pool's shared
// CPUs), then containers whose CPUs are the reserved CPUs or a pool's shared
// CPUs. Anything else is kept as it is, unaccounted ("fixed"). Containers
// already known are skipped.
func (s *state) adoptAll(pods []*abi.PodSandbox, list []*abi.Container) {
	byPod := podsByID(pods)
	var rest, mixed []*abi.Container
	type holder struct {
		spec   *abi.Container
		claims []*claim
	}
	var sharing []holder
	for _, spec := range sortByID(list) {
		if s.ctrs[spec.GetId()] != nil || spec.GetId() == "" {
			continue
		}
		pod := byPod[spec.GetPodSandboxId()]
		if claims, err := s.claimsOf(spec); err == nil && len(claims) > 0 {
			if ownCPU(spec) > 0 {
				sharing = append(sharing, holder{spec, claims})
				continue
			}
			s.adoptHolder(pod, spec, claims)
			continue
		}
		req := s.cfg.classify(pod, spec)
		a := spec.GetAssignment()
		cpus, err := cpuset.Parse(a.GetCpusetCpus())
		if err == nil && req.kind == kindMixed {
			mixed = append(mixed, spec)
			continue
		}
		if err != nil || req.kind != kindExclusive || cpus.Size() != req.cores ||
			!cpus.IsSubsetOf(s.res.available) || cpus.Intersects(s.res.reserved) || cpus.Intersects(s.exclusive) {
			rest = append(rest, spec)
			continue
		}
		c := s.adopted(pod, spec, kindExclusive)
		c.cpus, c.cpusText, c.isolated = cpus, cpus.String(), cpus.IsSubsetOf(s.res.isolated)
		c.pool = s.poolHolding(cpus, a.GetCpusetMems())
		s.add(c)
	}
	rest = s.adoptMixed(byPod, mixed, rest)
	for _, h := range sharing {
		s.adoptHolder(byPod[h.spec.GetPodSandboxId()], h.spec, h.claims)
	}
	for _, spec := range rest {
		if s.ctrs[spec.GetId()] != nil {
			continue // listed twice
		}
		pod := byPod[spec.GetPodSandboxId()]
		req := s.cfg.classify(pod, spec)
		a := spec.GetAssignment()
		cpus, err := cpuset.Parse(a.GetCpusetCpus())
		switch {
		case err != nil:
			policy.Log.Warnf("container %s: keeping unparsable cpuset %q: %v", spec.GetId(), a.GetCpusetCpus(), err)
			c := s.adopted(pod, spec, kindFixed)
			c.cpusText = a.GetCpusetCpus()
			s.add(c)
		case cpus.IsEmpty() && req.kind != kindPreserved && !s.cfg.PinCPU:
			// Never pinned because pinCPU is off: account for it as if new.
			if c, err := s.place(pod, spec); err == nil {
				c.mems = a.GetCpusetMems()
				continue
			}
			s.add(s.adopted(pod, spec, kindPreserved))
		case cpus.IsEmpty():
			c := s.adopted(pod, spec, kindPreserved)
			c.pinCPU = false
			s.add(c)
		case cpus.Equal(s.res.reserved):
			c := s.adopted(pod, spec, kindReserved)
			c.milli, c.pool = req.milli, s.reservedPool
			s.add(c)
		default:
			c := s.adopted(pod, spec, kindShared)
			if c.pool = s.sharedPoolWith(cpus, a.GetCpusetMems()); c.pool != nil {
				c.milli = req.milli
			} else {
				c.kind, c.cpus, c.cpusText = kindFixed, cpus, cpus.String()
				policy.Log.Warnf("container %s: cpuset %s is no pool's; kept as it is", spec.GetId(), cpus)
			}
			s.add(c)
		}
	}
}

// adopted starts the record of a container taken back with its assignment.
func (s *state) adopted(pod *abi.PodSandbox, spec *abi.Container, kind cpuKind) *container {
	c := &container{
		id: strings.Clone(spec.GetId()), pod: pod, spec: spec, kind: kind, pool: s.pools[0],
		pinCPU: s.cfg.PinCPU, mems: spec.GetAssignment().GetCpusetMems(), memKinds: s.ix.memKindsOf(pod, spec),
	}
	c.hideHT, _ = boolAnnotation(pod, spec, containers.KeyHideHyperthreads)
	return c
}

// byDepth lists the pools deepest first, then by id.
func (s *state) byDepth() []*pool {
	order := slices.Clone(s.pools)
	slices.SortStableFunc(order, func(a, b *pool) int { return cmp.Compare(b.depth, a.depth) })
	return order
}

// poolHolding is the deepest pool holding cpus, preferring one whose memory
// nodes are mems.
func (s *state) poolHolding(cpus cpuset.Set, mems string) *pool {
	var best *pool
	for _, p := range s.byDepth() {
		if cpus.IsSubsetOf(p.cpus) {
			if p.memsText == mems {
				return p
			}
			if best == nil {
				best = p
			}
		}
	}
	return best
}

// sharedPoolWith is the pool whose shared CPUs are cpus, preferring one whose
// memory nodes are mems, then the deepest; nil when there is none.
func (s *state) sharedPoolWith(cpus cpuset.Set, mems string) *pool {
	var best *pool
	for _, p := range s.byDepth() {
		if p.sharedSet().Equal(cpus) {
			if p.memsText == mems {
				return p
			}
			if best == nil {
				best = p
			}
		}
	}
	return best
}

func podsByID(pods []*abi.PodSandbox) map[string]*abi.PodSandbox {
	m := make(map[string]*abi.PodSandbox, len(pods))
	for _, p := range pods {
		m[p.GetId()] = p
	}
	return m
}

func sortByID(list []*abi.Container) []*abi.Container {
	out := slices.Clone(list)
	slices.SortStableFunc(out, func(a, b *abi.Container) int { return strings.Compare(a.GetId(), b.GetId()) })
	return out
}

func sortUpdates(u []*abi.ContainerUpdate) []*abi.ContainerUpdate {
	slices.SortFunc(u, func(a, b *abi.ContainerUpdate) int { return strings.Compare(a.ContainerId, b.ContainerId) })
	return u
}
