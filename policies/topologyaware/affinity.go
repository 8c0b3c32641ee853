package topologyaware

import (
	"errors"
	"fmt"
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/kit/expr"
	"sigs.k8s.io/yaml"
)

// The pod annotations of container affinity, as nri-plugins names them
// (pkg/resmgr/cache/affinity.go): pod-scoped, not looked up per container.
const (
	keyAffinity     = containers.AnnotationDomain + "/affinity"
	keyAntiAffinity = containers.AnnotationDomain + "/anti-affinity"
)

// Weights as nri-plugins gives them: an annotation's default, the cutoff a
// user's weight is clamped to, and the implicit affinities' (colocatePods,
// colocateNamespaces).
const (
	defaultWeight  = 1
	weightCutoff   = 1000
	implicitWeight = 10
)

// matcher is one side of an affinity: a test on a live container and its pod
// (an expression of nri-plugins' in its full form).
type matcher interface {
	Matches(pod *abi.PodSandbox, c *abi.Container) bool
}

// affinity pulls the container it belongs to towards the pools of the live
// containers in its scope that it matches (weight > 0), or pushes it away
// from them (weight < 0).
type affinity struct {
	scope, match matcher
	weight       int32
}

// always matches every container (nri-plugins' AlwaysTrue).
type always struct{}

func (always) Matches(*abi.PodSandbox, *abi.Container) bool { return true }

// inPod matches the containers of pods with this name (nri-plugins'
// pod.ScopeExpression: pod/name Equals name).
type inPod string

func (m inPod) Matches(pod *abi.PodSandbox, _ *abi.Container) bool { return pod.GetName() == string(m) }

// named matches containers with one of these names (name In names).
type named []string

func (m named) Matches(_ *abi.PodSandbox, c *abi.Container) bool {
	return slices.Contains(m, c.GetName())
}

// inNamespace matches the containers of one namespace (namespace Equals ns).
type inNamespace string

func (m inNamespace) Matches(pod *abi.PodSandbox, c *abi.Container) bool {
	return namespaceOf(pod, c) == string(m)
}

// affinities are container c's affinities: those its pod's affinity and
// anti-affinity annotations give it, else the implicit ones the
// configuration enables (nri-plugins adds colocatePods' and
// colocateNamespaces' only to a container without explicit ones). A
// malformed annotation is INVALID_ARGUMENT naming it: nri-plugins fails the
// allocation too.
func (cfg *Config) affinities(pod *abi.PodSandbox, c *abi.Container) ([]affinity, error) {
	var list []affinity
	for _, a := range []struct {
		key    string
		weight int32
	}{{keyAffinity, defaultWeight}, {keyAntiAffinity, -defaultWeight}} {
		v, ok := pod.GetAnnotations()[a.key]
		if !ok {
			continue
		}
		parsed, err := parseAffinity(pod, v, a.weight)
		if err != nil {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "pod.annotations["+a.key+"]", "%v", err)
		}
		list = append(list, parsed[c.GetName()]...)
	}
	if len(list) > 0 {
		return list, nil
	}
	if cfg.ColocatePods {
		list = append(list, affinity{scope: inPod(pod.GetName()), match: always{}, weight: implicitWeight})
	}
	if cfg.ColocateNamespaces {
		list = append(list, affinity{scope: always{}, match: inNamespace(namespaceOf(pod, c)), weight: implicitWeight})
	}
	return list, nil
}

// parseAffinity reads an affinity annotation's value, by container name.
// nri-plugins' simple form is a map of container names to the names of the
// containers of the same pod each has affinity to; affinity there is
// symmetric: "a: [b]" also gives b affinity to a. Its full form maps
// container names to lists of {scope, match, weight}: scope defaults to the
// pod's containers, weight to the annotation's (1, or -1 for
// anti-affinity), a weight given in an anti-affinity is negated, and
// weights are clamped to ±1000.
func parseAffinity(pod *abi.PodSandbox, value string, weight int32) (map[string][]affinity, error) {
	var simple map[string][]string
	if err := yaml.UnmarshalStrict([]byte(value), &simple); err != nil {
		return parseFullAffinity(pod, value, weight)
	}
	related := map[string][]string{}
	link := func(a, b string) {
		if !slices.Contains(related[a], b) {
			related[a] = append(related[a], b)
		}
	}
	for name, others := range simple {
		for _, o := range others {
			link(name, o)
			link(o, name)
		}
	}
	out := make(map[string][]affinity, len(related))
	for name, others := range related {
		out[name] = []affinity{{scope: inPod(pod.GetName()), match: named(others), weight: weight}}
	}
	return out, nil
}

// fullAffinity is one entry of an affinity annotation's full form.
type fullAffinity struct {
	Scope  *expr.Expression `json:"scope"`
	Match  *expr.Expression `json:"match"`
	Weight int32            `json:"weight"`
}

func parseFullAffinity(pod *abi.PodSandbox, value string, weight int32) (map[string][]affinity, error) {
	var full map[string][]fullAffinity
	if err := yaml.UnmarshalStrict([]byte(value), &full); err != nil {
		return nil, fmt.Errorf("neither {NAME: [NAME, ...]} nor {NAME: [{scope, match, weight}, ...]}: %w", err)
	}
	out := make(map[string][]affinity, len(full))
	for name, list := range full {
		for i, f := range list {
			at := func(err error) error { return fmt.Errorf("%s[%d].%w", name, i, err) }
			if f.Match == nil {
				return nil, at(errors.New("match: missing"))
			}
			if err := f.Match.Validate(); err != nil {
				return nil, at(fmt.Errorf("match.%w", err))
			}
			a := affinity{scope: inPod(pod.GetName()), match: f.Match, weight: weight}
			if f.Scope != nil {
				if err := f.Scope.Validate(); err != nil {
					return nil, at(fmt.Errorf("scope.%w", err))
				}
				a.scope = f.Scope
			}
			if f.Weight != 0 {
				a.weight = f.Weight
				if weight < 0 {
					a.weight = -a.weight
				}
			}
			a.weight = min(max(a.weight, -weightCutoff), weightCutoff)
			out[name] = append(out[name], a)
		}
	}
	return out, nil
}

// poolAffinities is, by pool id, the weight of c's affinities to the live
// containers in each pool (nri-plugins' calculatePoolAffinities), and
// whether any is not zero. A container counts where its grant is: reserved
// and preserved ones in the root, where nri-plugins allocates them.
func (s *state) poolAffinities(list []affinity, self string) ([]int64, bool) {
	if len(list) == 0 {
		return nil, false
	}
	byPool := make([]int64, len(s.pools))
	some := false
	for _, x := range s.ctrs { // sums: any order gives the same
		if x.id == self || x.pool == nil {
			continue
		}
		w := int64(0)
		for _, a := range list {
			if a.scope.Matches(x.pod, x.spec) && a.match.Matches(x.pod, x.spec) {
				w += int64(a.weight)
			}
		}
		if w == 0 {
			continue
		}
		p := x.pool
		if x.kind == kindReserved || x.kind == kindPreserved {
			p = s.pools[0]
		}
		byPool[p.id] += w
		some = true
	}
	return byPool, some
}

// affinityQ dilutes an affinity by each link between two pools.
const affinityQ = 0.75

// affinityScores are the pools' affinity scores, by pool id (nri-plugins'
// affinityScore): a pool's own affinity, plus that of every ancestor and
// every pool below it, each times affinityQ to the power of the links
// between them. Powers are repeated products, the same in Wasm as natively.
func (s *state) affinityScores(byPool []int64) []float64 {
	scores := make([]float64, len(s.pools))
	for _, p := range s.pools {
		var score float64
		q := affinityQ
		for a := p.parent; a != nil; a = a.parent {
			score += q * float64(byPool[a.id])
			q *= affinityQ
		}
		var below func(n *pool, q float64)
		below = func(n *pool, q float64) {
			score += q * float64(byPool[n.id])
			for _, c := range n.children {
				below(c, q*affinityQ)
			}
		}
		below(p, 1)
		scores[p.id] = score
	}
	return scores
}

// withAffinity puts the pools with the higher affinity score first, then
// those of next, as nri-plugins weighs affinity before everything but
// capacity (compareScores).
func withAffinity(scores []float64, next order) order {
	return func(a, b *pool, free []int64) int {
		if sa, sb := scores[a.id], scores[b.id]; sa != sb {
			return first(sa > sb)
		}
		return next(a, b, free)
	}
}
