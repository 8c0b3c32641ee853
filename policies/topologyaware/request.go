package topologyaware

import (
	"path"

	abi "github.com/nriwasm/nriwasm/abi/v1"
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
//   - Guaranteed above 1 CPU with a fraction → mixed: the whole CPUs
//     exclusive, the fraction shared (never isolated), unless
//     prefer-shared-cpus.
func (cfg *Config) classify(pod *abi.PodSandbox, c *abi.Container) request {
	milli := max(c.GetResources().GetCpuRequestMilli(), 0)
	r := request{kind: kindShared, milli: max(milli, 1), pinMems: cfg.PinMemory && !preserveAnnotation(pod, c, keyPreserveMemory)}
	if preserveAnnotation(pod, c, keyPreserveCPU) {
		r.kind = kindPreserved
		return r
	}
	preferReserved, annotated := boolAnnotation(pod, c, keyPreferReservedCPUs)
	if preferReserved || !annotated && cfg.reservedNamespace(namespaceOf(pod, c)) {
		r.kind = kindReserved
		return r
	}
	if qosOf(pod, c) != abi.QOSClass_QOS_CLASS_GUARANTEED || milli < 1000 {
		return r
	}
	shared, sharedSet := boolAnnotation(pod, c, keyPreferSharedCPUs)
	if !sharedSet {
		shared = cfg.PreferSharedCPUs
	}
	if shared {
		return r
	}
	if milli%1000 != 0 {
		r.kind, r.cores, r.milli = kindMixed, int(milli/1000), milli%1000
		return r
	}
	isolate, isolateSet, strict := isolationPreference(pod, c)
	if !isolateSet {
		isolate = cfg.PreferIsolatedCPUs && milli == 1000
	}
	r.kind, r.cores, r.isolate = kindExclusive, int(milli/1000), isolate
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
