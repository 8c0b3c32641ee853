package topologyaware

import (
	"strconv"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// The pod annotation keys the policy reads, as nri-plugins names them. Each is
// looked up as key+"/container."+name, then key+"/pod", then key itself.
const (
	annotationDomain      = "resource-policy.nri.io"
	keyPreferIsolatedCPUs = "prefer-isolated-cpus." + annotationDomain
	keyPreferSharedCPUs   = "prefer-shared-cpus." + annotationDomain
	keyPreferReservedCPUs = "prefer-reserved-cpus." + annotationDomain
	keyPreserveCPU        = "cpu.preserve." + annotationDomain
	keyPreserveMemory     = "memory.preserve." + annotationDomain
	keyUnlimitedBurstable = "unlimited-burstable." + annotationDomain
	keyHideHyperthreads   = "hide-hyperthreads." + annotationDomain
	keyRequireIsolated    = "require-isolated-cpus." + annotationDomain
	keyMemoryType         = "memory-type." + annotationDomain
)

// unimplemented are nri-plugins' topology-aware annotations this policy
// recognises but does not act on, and what a container gets instead.
var unimplemented = []struct{ key, why string }{
	{"cold-start." + annotationDomain, "cold start (PMEM) is not implemented"},
	{"prefer-cpu-priority." + annotationDomain, "CPU priorities are not read"},
	{"pick-resources-by-hints." + annotationDomain, "memory is not picked by topology hints"},
	{"scheduling-class." + annotationDomain, "scheduling classes are not applied"},
	{"cpu-class." + annotationDomain, "CPU classes are not applied"},
	{"irq-affinity." + annotationDomain, "IRQ affinity is not steered"},
}

// warnUnimplemented logs each recognised annotation of c that this policy
// does not implement, so that none is ignored silently.
func warnUnimplemented(pod *abi.PodSandbox, c *abi.Container) {
	if len(pod.GetAnnotations()) == 0 && len(c.GetAnnotations()) == 0 {
		return
	}
	for _, u := range unimplemented {
		if v, ok := effectiveAnnotation(pod, c, u.key); ok {
			policy.Log.Warnf("container %s: annotation %s=%q ignored: %s", c.GetId(), u.key, v, u.why)
		}
	}
}

// annotationScope is how specific an effective annotation is, the most
// specific first (nri-plugins' AnnotationScope).
type annotationScope int

const (
	scopeContainer annotationScope = iota // key/container.NAME
	scopePod                              // key/pod
	scopeBare                             // key
)

// effectiveAnnotation finds key for container c of pod: the container-scoped
// form first, then the pod-scoped form, then the bare key. The pod's
// annotations are searched before the container's own at each scope.
func effectiveAnnotation(pod *abi.PodSandbox, c *abi.Container, key string) (string, bool) {
	v, _, ok := scopedAnnotation(pod, c, key)
	return v, ok
}

// scopedAnnotation is effectiveAnnotation that also tells the scope it was
// found at.
func scopedAnnotation(pod *abi.PodSandbox, c *abi.Container, key string) (string, annotationScope, bool) {
	if len(pod.GetAnnotations()) == 0 && len(c.GetAnnotations()) == 0 {
		return "", 0, false
	}
	for _, at := range [...]struct {
		scope annotationScope
		key   string
	}{{scopeContainer, key + "/container." + c.GetName()}, {scopePod, key + "/pod"}, {scopeBare, key}} {
		if v, ok := pod.GetAnnotations()[at.key]; ok {
			return v, at.scope, true
		}
		if v, ok := c.GetAnnotations()[at.key]; ok {
			return v, at.scope, true
		}
	}
	return "", 0, false
}

// isolationPreference is nri-plugins' isolatedCPUsPreference and
// strictIsolatedCPUsPreference: of require-isolated-cpus and
// prefer-isolated-cpus, the one at the more specific scope decides
// (require-isolated-cpus on a tie); annotated tells whether either gave a
// valid boolean, and strict whether require-isolated-cpus is the one, so
// that a grant without enough isolated CPUs is refused.
func isolationPreference(pod *abi.PodSandbox, c *abi.Container) (isolate, annotated, strict bool) {
	sv, ss, sok := scopedAnnotation(pod, c, keyRequireIsolated)
	pv, ps, pok := scopedAnnotation(pod, c, keyPreferIsolatedCPUs)
	if !sok && !pok {
		return false, false, false
	}
	strict = sok && (!pok || ss <= ps)
	key, v := keyPreferIsolatedCPUs, pv
	if strict {
		key, v = keyRequireIsolated, sv
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		policy.Log.Warnf("container %s: ignoring annotation %s=%q: not a boolean", c.GetId(), key, v)
		return false, false, strict
	}
	return b, true, strict
}

// boolAnnotation returns an effective boolean annotation and whether it was
// set. A value strconv.ParseBool does not accept is logged and ignored, as
// nri-plugins does.
func boolAnnotation(pod *abi.PodSandbox, c *abi.Container, key string) (value, set bool) {
	v, ok := effectiveAnnotation(pod, c, key)
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		policy.Log.Warnf("container %s: ignoring annotation %s=%q: not a boolean", c.GetId(), key, v)
		return false, false
	}
	return b, true
}

// preserveAnnotation tells whether a preserve annotation is "true" (exactly,
// as nri-plugins compares it).
func preserveAnnotation(pod *abi.PodSandbox, c *abi.Container, key string) bool {
	v, ok := effectiveAnnotation(pod, c, key)
	return ok && v == "true"
}
