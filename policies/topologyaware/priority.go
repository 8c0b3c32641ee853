package topologyaware

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/kit/topology"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// cpuPrio is nri-plugins' CPU priority (pkg/cpuallocator CPUPriority): the
// kind of CPU a container prefers for its exclusive CPUs, and the class each
// CPU falls in.
type cpuPrio int8

const (
	prioHigh cpuPrio = iota
	prioNormal
	prioLow
	numPrios
	// prioNone: no preference; CPUs are picked by topology alone.
	prioNone = numPrios
)

var prioNames = [...]string{"high", "normal", "low", "none"}

func (p cpuPrio) String() string { return prioNames[p] }

// prioByName parses a priority as nri-plugins writes it.
func prioByName(s string) (cpuPrio, bool) {
	i := slices.Index(prioNames[:], s)
	return cpuPrio(i), i >= 0
}

// keyPreferCPUPriority is nri-plugins' prefer-cpu-priority annotation: high,
// normal, low, none, or default (the configured defaultCPUPriority).
const keyPreferCPUPriority = "prefer-cpu-priority." + containers.AnnotationDomain

// priorities is what the CPU priorities of a machine are, as nri-plugins'
// CPU allocator discovers them when SST is not active (topology.Priorities:
// by base frequency, core type and energy-performance preference, package
// by package).
type priorities struct {
	of   []cpuPrio            // by CPU id; online CPUs only
	sets [numPrios]cpuset.Set // the CPUs of each class
	// core is how many of each core's online threads fall in each class,
	// by core id (its lowest thread's id).
	core [][numPrios]int
	// pCores and eCores are the performance and efficient cores. As in
	// nri-plugins, a machine whose CPUs name no core type has only
	// performance cores.
	pCores, eCores cpuset.Set
	// varied: the CPUs fall in more than one class.
	varied bool
}

// discoverPriorities classifies the online CPUs of t.
func discoverPriorities(t *abi.Topology, ix *topoIndex) priorities {
	pr := priorities{of: make([]cpuPrio, len(ix.cpus)), core: make([][numPrios]int, len(ix.cpus))}
	of, sets := topology.Priorities(t, ix.online)
	typed := false
	for _, c := range t.GetCpus() {
		id := c.GetId()
		if !ix.online.Contains(id) {
			continue
		}
		switch c.GetCoreType() {
		case abi.CoreType_CORE_TYPE_PERFORMANCE:
			pr.pCores, typed = pr.pCores.Union(cpuset.New(id)), true
		case abi.CoreType_CORE_TYPE_EFFICIENT:
			pr.eCores, typed = pr.eCores.Union(cpuset.New(id)), true
		}
		p := cpuPrio(of[id])
		pr.of[id] = p
		pr.core[ix.cpus[id].core][p]++
	}
	if !typed {
		pr.pCores = ix.online
	}
	classes := 0
	for p, s := range sets {
		pr.sets[p] = s
		if !s.IsEmpty() {
			classes++
		}
	}
	pr.varied = classes > 1
	return pr
}

// capacitySet is the set whose free CPUs a pool must have for a container
// preferring p (nri-plugins' GetScore: efficient cores, else the low class,
// for low; performance cores, else the high class, for high; the normal
// class for normal), and whether p has one.
func (pr *priorities) capacitySet(p cpuPrio) (cpuset.Set, bool) {
	switch p {
	case prioLow:
		if !pr.eCores.IsEmpty() {
			return pr.eCores, true
		}
		return pr.sets[prioLow], true
	case prioHigh:
		if !pr.pCores.IsEmpty() {
			return pr.pCores, true
		}
		return pr.sets[prioHigh], true
	case prioNormal:
		return pr.sets[prioNormal], true
	}
	return cpuset.Set{}, false
}

// cmpCounts compares two CPU sets by their class counts for a container
// preferring prefer, as nri-plugins' cmpCPUSet without a count: negative
// when a is preferred. The set with more CPUs of the preferred class wins,
// then of each class below it in turn; then the set with fewer CPUs of a
// class above it, highest first.
func cmpCounts(a, b [numPrios]int, prefer cpuPrio) int {
	if prefer >= numPrios {
		return 0
	}
	for p := prefer; p < numPrios; p++ {
		if a[p] != b[p] {
			return cmp.Compare(b[p], a[p])
		}
	}
	for p := prioHigh; p < prefer; p++ {
		if a[p] != b[p] {
			return cmp.Compare(a[p], b[p])
		}
	}
	return 0
}

// prioRanks lists the classes in the order single CPUs are taken for a
// container preferring prefer: that class, those below it, then those above
// it, nearest first (cmpCounts on single CPUs).
func prioRanks(prefer cpuPrio) []cpuPrio {
	ranks := make([]cpuPrio, 0, numPrios)
	for p := prefer; p < numPrios; p++ {
		ranks = append(ranks, p)
	}
	for p := prefer - 1; p >= prioHigh; p-- {
		ranks = append(ranks, p)
	}
	return ranks
}

// cpuPriority is the priority a container prefers (nri-plugins'
// cpuPrioPreference): the prefer-cpu-priority annotation, "default" or an
// unknown value meaning the configured default.
func (cfg *Config) cpuPriority(pod *abi.PodSandbox, c *abi.Container) cpuPrio {
	v, ok := effectiveAnnotation(pod, c, keyPreferCPUPriority)
	if !ok || v == "default" {
		return cfg.DefaultCPUPriority
	}
	p, known := prioByName(v)
	if !known {
		policy.Log.Warnf("container %s: ignoring annotation %s=%q: want high, normal, low, none or default", c.GetId(), keyPreferCPUPriority, v)
		return cfg.DefaultCPUPriority
	}
	return p
}

// withPrio orders pools for a container preferring r.prio, as nri-plugins'
// compareScores: past depth (which stands for its tighter memory offer and
// lower node), a pool whose free CPUs of the preferred class hold the
// request wins over one whose do not. For none, or on a machine of one
// class, it is next.
func (s *state) withPrio(r request, next order) order {
	set, ok := s.ix.prio.capacitySet(r.prio)
	if !ok || !s.ix.prio.varied {
		return next
	}
	need := 1000 * int64(r.cores)
	if r.kind != kindExclusive {
		need += r.milli // a shared request, or a mixed one's fraction
	}
	fits := func(p *pool) bool { return 1000*int64(p.sharedSet().Intersection(set).Size()) >= need }
	return func(a, b *pool, free []int64) int {
		if a.depth != b.depth {
			return cmp.Compare(b.depth, a.depth)
		}
		if fa, fb := fits(a), fits(b); fa != fb {
			return first(fa)
		}
		return next(a, b, free)
	}
}

// prioDoc is defaultCPUPriority as written.
type prioDoc cpuPrio

// UnmarshalJSON implements json.Unmarshaler: high, normal, low or none.
func (p *prioDoc) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if v, ok := prioByName(s[1 : len(s)-1]); ok {
			*p = prioDoc(v)
			return nil
		}
	}
	return fmt.Errorf("%s: want high, normal, low or none", b)
}
