package topologyaware

import (
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// The pod annotation keys the policy reads besides those every nri-plugins
// policy reads (containers.KeyPreserveCPU, ...), as nri-plugins names them.
// Each is looked up as key+"/container."+name, then key+"/pod", then key
// itself.
const (
	keyPreferIsolatedCPUs = "prefer-isolated-cpus." + containers.AnnotationDomain
	keyPreferSharedCPUs   = "prefer-shared-cpus." + containers.AnnotationDomain
	keyPreferReservedCPUs = "prefer-reserved-cpus." + containers.AnnotationDomain
	keyUnlimitedBurstable = "unlimited-burstable." + containers.AnnotationDomain
	keyRequireIsolated    = "require-isolated-cpus." + containers.AnnotationDomain
)

// unimplemented are nri-plugins' topology-aware annotations this policy
// recognises but does not act on, and what a container gets instead.
var unimplemented = []struct{ key, why string }{
	{"cold-start." + containers.AnnotationDomain, "cold start (PMEM) is not implemented"},
	{"pick-resources-by-hints." + containers.AnnotationDomain, "memory is not picked by topology hints"},
	{"scheduling-class." + containers.AnnotationDomain, "scheduling classes are not applied"},
	{"cpu-class." + containers.AnnotationDomain, "CPU classes are not applied"},
	{"irq-affinity." + containers.AnnotationDomain, "IRQ affinity is not steered"},
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

// effectiveAnnotation finds key for container c of pod
// (containers.Effective): the container-scoped form first, then the
// pod-scoped form, then the bare key. The pod's annotations are searched
// before the container's own at each scope.
func effectiveAnnotation(pod *abi.PodSandbox, c *abi.Container, key string) (string, bool) {
	a, ok := scopedAnnotation(pod, c, key)
	return a.Value, ok
}

// scopedAnnotation is effectiveAnnotation with its key and scope.
func scopedAnnotation(pod *abi.PodSandbox, c *abi.Container, key string) (containers.Annotation, bool) {
	return containers.Effective(key, c.GetName(), pod.GetAnnotations(), c.GetAnnotations())
}

// isolationPreference is nri-plugins' isolatedCPUsPreference and
// strictIsolatedCPUsPreference: of require-isolated-cpus and
// prefer-isolated-cpus, the one at the more specific scope decides
// (require-isolated-cpus on a tie); annotated tells whether either gave a
// valid boolean, and strict whether require-isolated-cpus is the one, so
// that a grant without enough isolated CPUs is refused.
func isolationPreference(pod *abi.PodSandbox, c *abi.Container) (isolate, annotated, strict bool) {
	req, sok := scopedAnnotation(pod, c, keyRequireIsolated)
	pref, pok := scopedAnnotation(pod, c, keyPreferIsolatedCPUs)
	if !sok && !pok {
		return false, false, false
	}
	strict = sok && (!pok || req.Scope <= pref.Scope)
	a := pref
	if strict {
		a = req
	}
	b, err := a.Bool()
	if err != nil {
		policy.Log.Warnf("container %s: ignoring annotation: %v", c.GetId(), err)
		return false, false, strict
	}
	return b, true, strict
}

// boolAnnotation is containers.Bool over the pod's annotations, then the
// container's own.
func boolAnnotation(pod *abi.PodSandbox, c *abi.Container, key string) (value, set bool) {
	return containers.Bool(key, c, pod.GetAnnotations(), c.GetAnnotations())
}

// preserveAnnotation tells whether a preserve annotation is "true" (exactly,
// as nri-plugins compares it).
func preserveAnnotation(pod *abi.PodSandbox, c *abi.Container, key string) bool {
	v, ok := effectiveAnnotation(pod, c, key)
	return ok && v == "true"
}
