package topologyaware

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
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

// eppUnknown is the rank of an energy-performance preference nri-plugins'
// sysfs.EPPFromString does not name: "default", a raw number, or none.
const eppUnknown = 4

// eppRank is nri-plugins' sysfs.EPP of a CPU's energy-performance
// preference (ABI v1.4 CPU.energy_performance_preference): performance 0,
// balance_performance 1, balance_power 2, power 3, anything else
// eppUnknown. A higher rank prefers performance less.
func eppRank(s string) int {
	switch s {
	case "performance":
		return 0
	case "balance_performance":
		return 1
	case "balance_power":
		return 2
	case "power":
		return 3
	}
	return eppUnknown
}

// priorities is what the CPU priorities of a machine are, as nri-plugins'
// CPU allocator discovers them when SST is not active
// (discoverCpufreqPriority): per package, CPUs above the package's lowest
// base frequency are high, those at it low (normal when the package has one
// base frequency or none); efficient cores are low whatever their frequency
// or preference; then, where the package's CPUs have more than one known
// energy-performance preference, the preference decides over the base
// frequency: a CPU whose rank (eppRank) is below the package's highest
// known one is high, every other low, an unknown one included.
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

// discoverPriorities classifies the online CPUs of t by package.
func discoverPriorities(t *abi.Topology, ix *topoIndex) priorities {
	pr := priorities{of: make([]cpuPrio, len(ix.cpus)), core: make([][numPrios]int, len(ix.cpus))}
	byPkg := map[uint32][]*abi.CPU{}
	typed := false
	for _, c := range t.GetCpus() {
		if !ix.online.Contains(c.GetId()) {
			continue
		}
		byPkg[c.GetPackageId()] = append(byPkg[c.GetPackageId()], c)
		switch c.GetCoreType() {
		case abi.CoreType_CORE_TYPE_PERFORMANCE:
			pr.pCores, typed = pr.pCores.Union(cpuset.New(c.GetId())), true
		case abi.CoreType_CORE_TYPE_EFFICIENT:
			pr.eCores, typed = pr.eCores.Union(cpuset.New(c.GetId())), true
		}
	}
	if !typed {
		pr.pCores = ix.online
	}
	for _, cpus := range byPkg {
		var freqs []uint64
		for _, c := range cpus {
			if f := c.GetBaseFreqKhz(); f > 0 && !slices.Contains(freqs, f) {
				freqs = append(freqs, f)
			}
		}
		var lowestFreq uint64
		if len(freqs) > 0 {
			lowestFreq = slices.Min(freqs)
		}
		var epps []int // the package's known preferences, by rank
		for _, c := range cpus {
			if r := eppRank(c.GetEnergyPerformancePreference()); r != eppUnknown && !slices.Contains(epps, r) {
				epps = append(epps, r)
			}
		}
		var leastPerf int
		if len(epps) > 0 {
			leastPerf = slices.Max(epps)
		}
		for _, c := range cpus {
			p := prioNormal
			if len(freqs) > 1 {
				p = prioLow
				if c.GetBaseFreqKhz() > lowestFreq {
					p = prioHigh
				}
			}
			switch {
			case c.GetCoreType() == abi.CoreType_CORE_TYPE_EFFICIENT:
				p = prioLow
			case len(epps) > 1:
				p = prioLow
				if eppRank(c.GetEnergyPerformancePreference()) < leastPerf {
					p = prioHigh
				}
			}
			pr.of[c.GetId()] = p
			pr.core[ix.cpus[c.GetId()].core][p]++
			pr.sets[p] = pr.sets[p].Union(cpuset.New(c.GetId()))
		}
	}
	classes := 0
	for _, s := range pr.sets {
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
