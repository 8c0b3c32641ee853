package topologyaware

import (
	"path"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
)

// cpuKind is what kind of CPUs a container gets.
type cpuKind int

const (
	// kindShared: the shared CPUs of its pool.
	kindShared cpuKind = iota
	// kindExclusive: whole CPUs of its own.
	kindExclusive
	// kindReserved: the reserved CPUs.
	kindReserved
	// kindPreserved: cpu.preserve; its CPUs are left alone and not accounted.
	kindPreserved
	// kindFixed: adopted with CPUs this policy would not have given (restored
	// from another configuration); they are left alone and not accounted.
	kindFixed
	// kindClaim: pinned to the CPUs of the DRA claims it holds; they are
	// accounted for by the claims.
	kindClaim
	// kindMixed: whole CPUs of its own plus the shared CPUs of its pool, for
	// the fraction (a Guaranteed 1500m: 1 exclusive CPU and 500m shared).
	kindMixed
)

var kindNames = [...]string{"shared", "exclusive", "reserved", "preserved", "fixed", "claim", "mixed"}

func (k cpuKind) String() string { return kindNames[k] }

// request is what a container asks for, after QoS class, namespace,
// configuration and annotations have been weighed.
type request struct {
	kind    cpuKind
	milli   int64 // the shared capacity it takes (shared, reserved: ≥ 1; mixed: the fraction)
	cores   int   // exclusive CPUs (exclusive, mixed)
	isolate bool  // exclusive CPUs from the isolated ones, if enough are free
	// requireIsolated: require-isolated-cpus; without enough free isolated
	// CPUs the container is refused rather than given others.
	requireIsolated bool
	pinMems         bool // answer cpuset_mems
	// prio is the CPU priority its exclusive CPUs are picked by, and its
	// pool chosen by (nri-plugins' cpuAllocationPreferences: the
	// configured default, or for a Guaranteed container its
	// prefer-cpu-priority annotation).
	prio cpuPrio
}

const kubeSystem = "kube-system"

// classify decides a container's request as nri-plugins does:
//
//   - cpu.preserve → untouched;
//   - prefer-reserved-cpus, or kube-system / reservedPoolNamespaces unless
//     annotated otherwise → the reserved CPUs;
//   - BestEffort, Burstable, Guaranteed below 1 CPU → shared;
//   - Guaranteed with whole CPUs → exclusive, unless prefer-shared-cpus
//     (annotation, else preferSharedCPUs). Isolated CPUs are preferred for
//     a single CPU when preferIsolatedCPUs (or the annotation) says so, and
//     for more CPUs only when annotated; require-isolated-cpus is
//     prefer-isolated-cpus that refuses the container when not enough
//     isolated CPUs are free;
//   - Guaranteed between 1 and 2 CPUs with a fraction → mixed: the whole
//     CPU exclusive (isolated as for a single CPU), the fraction shared,
//     unless prefer-shared-cpus;
//   - Guaranteed of 2 CPUs or more with a fraction → shared, the whole
//     request, unless prefer-shared-cpus is annotated "false" (not merely
//     configured): then mixed, isolated only when annotated.
func (cfg *Config) classify(pod *abi.PodSandbox, c *abi.Container) request {
	milli := max(c.GetResources().GetCpuRequestMilli(), 0)
	r := request{kind: kindShared, milli: max(milli, 1), pinMems: cfg.PinMemory && !preserveAnnotation(pod, c, containers.KeyPreserveMemory), prio: cfg.DefaultCPUPriority}
	if preserveAnnotation(pod, c, containers.KeyPreserveCPU) {
		r.kind = kindPreserved
		return r
	}
	preferReserved, annotated := boolAnnotation(pod, c, keyPreferReservedCPUs)
	if preferReserved || !annotated && cfg.reservedNamespace(namespaceOf(pod, c)) {
		r.kind = kindReserved
		return r
	}
	if qosOf(pod, c) != abi.QOSClass_QOS_CLASS_GUARANTEED {
		return r
	}
	r.prio = cfg.cpuPriority(pod, c)
	if milli < 1000 {
		return r
	}
	shared, sharedSet := boolAnnotation(pod, c, keyPreferSharedCPUs)
	if !sharedSet {
		shared = cfg.PreferSharedCPUs
	}
	if shared {
		return r
	}
	cores, fraction := int(milli/1000), milli%1000
	isolate, isolateSet, strict := isolationPreference(pod, c)
	if !isolateSet {
		// Isolated CPUs by default only for a single core (nri-plugins:
		// "for multiple cores, isolated preference must be explicitly
		// annotated").
		isolate = cfg.PreferIsolatedCPUs && cores == 1
	}
	if fraction != 0 {
		// 2 CPUs or more with a fraction are mixed only when
		// prefer-shared-cpus is annotated "false"; otherwise shared
		// (nri-plugins' cpuAllocationPreferences).
		if cores >= 2 && !sharedSet {
			return r
		}
		r.kind, r.cores, r.milli, r.isolate = kindMixed, cores, fraction, isolate
		r.requireIsolated = isolate && strict
		return r
	}
	r.kind, r.cores, r.isolate = kindExclusive, cores, isolate
	r.requireIsolated = isolate && strict
	return r
}

// reservedNamespace tells whether ns runs on the reserved CPUs.
func (cfg *Config) reservedNamespace(ns string) bool {
	if ns == kubeSystem {
		return true
	}
	for _, glob := range cfg.ReservedPoolNamespaces {
		if ok, _ := path.Match(glob, ns); ok {
			return true
		}
	}
	return false
}

func namespaceOf(pod *abi.PodSandbox, c *abi.Container) string {
	if ns := c.GetNamespace(); ns != "" {
		return ns
	}
	return pod.GetNamespace()
}

func qosOf(pod *abi.PodSandbox, c *abi.Container) abi.QOSClass {
	if q := c.GetQosClass(); q != abi.QOSClass_QOS_CLASS_UNSPECIFIED {
		return q
	}
	return pod.GetQosClass()
}
