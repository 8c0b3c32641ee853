package balloons

import (
	"fmt"
	"path"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/kit/expr"
)

// The pod annotation keys the policy reads besides those every nri-plugins
// policy reads (containers.KeyPreserveCPU, ...), as nri-plugins names them.
// Each is looked up as key+"/container."+name, then key+"/pod", then key
// itself.
const (
	keyBalloon = "balloon.balloons." + containers.AnnotationDomain
	// keyAssigned (ours) is set on every placed container: "TYPE[INSTANCE]",
	// so a restart finds each container's balloon again.
	keyAssigned = "balloons.nriwasm.io/balloon"
)

// effectiveAnnotation finds key for container c in pod's annotations
// (containers.Effective): the container-scoped form first, then the
// pod-scoped form, then the bare key. It returns the key found and its
// value.
func effectiveAnnotation(pod *abi.PodSandbox, c *abi.Container, key string) (string, string, bool) {
	a, ok := containers.Effective(key, c.GetName(), pod.GetAnnotations())
	return a.Key, a.Value, ok
}

// boolAnnotation is containers.Bool over the pod's annotations.
func boolAnnotation(pod *abi.PodSandbox, c *abi.Container, key string) (value, set bool) {
	return containers.Bool(key, c, pod.GetAnnotations())
}

// preserved tells whether the policy leaves c's CPUs alone: the
// cpu.preserve annotation, or the preserve.matchExpressions.
func (s *state) preserved(pod *abi.PodSandbox, c *abi.Container) bool {
	if _, v, ok := effectiveAnnotation(pod, c, containers.KeyPreserveCPU); ok && v == "true" {
		return true
	}
	if s.cfg.Preserve != nil {
		for i := range s.cfg.Preserve.MatchExpressions {
			if s.cfg.Preserve.MatchExpressions[i].Matches(pod, c) {
				return true
			}
		}
	}
	return false
}

// chooseType picks c's balloon type: the balloon annotation, then the first
// type (in list order) whose matchExpressions or namespaces match, then
// default. Types published as DRA devices are reached only through claims.
func (s *state) chooseType(pod *abi.PodSandbox, c *abi.Container) (*btype, error) {
	if k, name, ok := effectiveAnnotation(pod, c, keyBalloon); ok {
		t := s.byName[name]
		f := "pod.annotations[" + k + "]"
		switch {
		case t == nil:
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, f, "no balloon type %q", name)
		case t.PublishDRADevices:
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, f, "balloon type %q is reached through DRA claims only", name)
		}
		return t, nil
	}
	ns := expr.Namespace(pod, c)
	for _, t := range s.types {
		if t.PublishDRADevices {
			continue
		}
		for i := range t.MatchExpressions {
			if t.MatchExpressions[i].Matches(pod, c) {
				return t, nil
			}
		}
		for _, g := range t.namespaces {
			if g.matches(ns) {
				return t, nil
			}
		}
	}
	return s.deflt, nil
}

// namespaceGlob is a namespaces entry: a path.Match pattern, compared as a
// string when it has no special character (most do: "kube-system"), which
// in Wasm costs a fraction of path.Match.
type namespaceGlob struct {
	pattern string
	literal bool
}

func newNamespaceGlob(pattern string) namespaceGlob {
	return namespaceGlob{pattern: pattern, literal: !strings.ContainsAny(pattern, `*?[\`)}
}

// matches tells whether ns matches the pattern; a malformed pattern
// matches nothing.
func (g namespaceGlob) matches(ns string) bool {
	if g.literal {
		return g.pattern == ns
	}
	ok, _ := path.Match(g.pattern, ns)
	return ok
}

// newContainer records what the policy needs of a container. Its id, pod
// id, name and namespace are copied out of the request (whose bytes they
// would otherwise keep) into one string: one allocation, not four, and
// they live exactly as long as c.
func (s *state) newContainer(pod *abi.PodSandbox, spec *abi.Container) *container {
	id, podID, name, ns := spec.GetId(), spec.GetPodSandboxId(), spec.GetName(), expr.Namespace(pod, spec)
	var sb strings.Builder
	sb.Grow(len(id) + len(podID) + len(name) + len(ns))
	sb.WriteString(id)
	sb.WriteString(podID)
	sb.WriteString(name)
	sb.WriteString(ns)
	all := sb.String()
	i, j, k := len(id), len(id)+len(podID), len(id)+len(podID)+len(name)
	c := &container{id: all[:i], pod: all[i:j], name: all[j:k], ns: all[k:], milli: spec.GetResources().GetCpuRequestMilli()}
	if _, v, ok := effectiveAnnotation(pod, spec, containers.KeyPreserveMemory); ok && v == "true" {
		c.keepMems = true
	}
	return c
}

// place puts a new container into a balloon, inflating or creating one. On
// an error nothing changed.
func (s *state) place(pod *abi.PodSandbox, spec *abi.Container) (*container, error) {
	c := s.newContainer(pod, spec)
	if s.preserved(pod, spec) {
		s.ctrs[c.id] = c
		return c, nil
	}
	claims, err := s.claimsOf(spec)
	if err != nil {
		return nil, err
	}
	var b *balloon
	if len(claims) > 0 {
		if b, err = s.claimBalloon(claims); err != nil {
			return nil, err
		}
		if room := int64(s.maxCPUs(b))*1000 - b.milli; room < c.milli {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources.cpu_request_milli",
				"%dm does not fit in claim %s's balloon %s: %dm left", c.milli, claims[0].uid, b.name(), room)
		}
		c.claims = []string{claims[0].uid}
	} else {
		t, err := s.chooseType(pod, spec)
		if err != nil {
			return nil, err
		}
		if t.MaxCPUs == -1 {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container", "balloon type %s has maxCPUs -1: its containers do not run on this node", t.Name)
		}
		if t.GroupBy != "" {
			c.group, _ = expr.Expand(t.GroupBy, func(k string) (string, bool) { return expr.Value(k, pod, spec) })
		}
		if b, err = s.chooseBalloon(t, c); err != nil {
			return nil, err
		}
	}
	c.hideHT = b.t.hideHT
	if v, ok := boolAnnotation(pod, spec, containers.KeyHideHyperthreads); ok {
		c.hideHT = v
	}
	c.memTypes = memoryTypesOf(pod, spec, b.t, c.keepMems)
	// At least one CPU, even for best-effort containers: an empty cpuset
	// would mean every CPU.
	if err := s.resize(b, max(1, b.milli+c.milli)); err != nil {
		if b.milli == 0 && len(b.members) == 0 && s.countOwn(b.t) > b.t.MinBalloons {
			s.deleteBalloon(b)
		}
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources.cpu_request_milli", "%dm: %v", c.milli, err)
	}
	s.join(c, b)
	return c, nil
}

// join adds c to b.
func (s *state) join(c *container, b *balloon) {
	c.b = b
	b.addMember(c)
	b.milli += c.milli
	s.pods[c.pod] = append(s.pods[c.pod], c)
	b.nss[c.ns]++
	if c.group != "" {
		b.groups[c.group]++
	}
	s.ctrs[c.id] = c
	c.assign(s.pinOf(c))
}

// remove forgets a container; its balloon deflates, or goes when it is
// empty and its type has more than minBalloons.
func (s *state) remove(id string) {
	c := s.ctrs[id]
	if c == nil {
		return
	}
	delete(s.ctrs, id)
	b := c.b
	if b == nil {
		return
	}
	b.dropMember(id)
	b.milli -= c.milli
	dec := func(m map[string]int, k string) {
		if m[k]--; m[k] <= 0 {
			delete(m, k)
		}
	}
	if rest := slices.DeleteFunc(s.pods[c.pod], func(x *container) bool { return x == c }); len(rest) > 0 {
		s.pods[c.pod] = rest
	} else {
		delete(s.pods, c.pod)
	}
	dec(b.nss, c.ns)
	if c.group != "" {
		dec(b.groups, c.group)
	}
	if len(b.members) == 0 {
		_ = s.resize(b, 0) // deflating never fails
		if s.countOwn(b.t) > b.t.MinBalloons && b.claim == "" {
			s.deleteBalloon(b)
		}
		return
	}
	_ = s.resize(b, max(1, b.milli))
}

// chooseBalloon picks an instance of t for c the way nri-plugins' fill
// methods do: the balloon of c's group, of its pod (unless
// preferSpreadingPods), of its namespace (preferPerNamespaceBalloon), then
// existing balloons with room (without inflating, then inflating) and a new
// one, or with preferNewBalloons a new one first. Among candidates the one
// with the most room wins, then the one with fewest containers.
func (s *state) chooseBalloon(t *btype, c *container) (*balloon, error) {
	type method int
	const (
		sameGroup method = iota
		samePod
		sameNamespace
		newBalloon
		balanced
		balancedInflate
	)
	chain := make([]method, 0, 6)
	if t.GroupBy != "" {
		chain = append(chain, sameGroup)
	}
	if !t.PreferSpreadingPods {
		chain = append(chain, samePod)
	}
	if t.PreferPerNamespaceBalloon {
		chain = append(chain, sameNamespace, newBalloon)
	}
	if t.PreferNewBalloons {
		chain = append(chain, newBalloon, balanced, balancedInflate)
	} else {
		chain = append(chain, balanced, balancedInflate, newBalloon)
	}
	// The type's open balloons with their room now and after inflating,
	// computed once: the fill methods only compare. The list is the
	// state's, kept between calls: a call allocates nothing for it.
	open := s.open[:0]
	defer func() { s.open = open[:0] }()
	for _, b := range t.own {
		if b.claim == "" {
			open = append(open, openBalloon{b, int64(b.cpus.Size())*1000 - b.milli, int64(s.maxCPUs(b))*1000 - b.milli})
		}
	}
	// The balloons of c's pod's other containers (the state keeps them by
	// pod: no balloon's map to look up for each candidate).
	var podBalloons []*balloon
	for _, pc := range s.pods[c.pod] {
		podBalloons = append(podBalloons, pc.b)
	}
	var lastErr error
	for _, m := range chain {
		best, bestRoom := -1, int64(0)
		for i, cd := range open {
			ok, by := false, cd.maxRoom
			switch m {
			case sameGroup:
				ok = cd.b.groups[c.group] > 0 && cd.maxRoom >= c.milli
			case samePod:
				ok = cd.maxRoom >= c.milli && slices.Contains(podBalloons, cd.b)
			case sameNamespace:
				ok = cd.b.nss[c.ns] > 0 && cd.maxRoom >= c.milli
			case newBalloon:
				ok = len(cd.b.members) == 0 && cd.maxRoom >= c.milli
			case balanced:
				ok, by = cd.room >= c.milli, cd.room
			case balancedInflate:
				ok = cd.maxRoom >= c.milli
			}
			// The most room wins, then the fewest containers, then list order.
			if ok && (best < 0 || by > bestRoom || by == bestRoom && len(cd.b.members) < len(open[best].b.members)) {
				best, bestRoom = i, by
			}
		}
		if best >= 0 {
			return open[best].b, nil
		}
		if m == newBalloon {
			b, err := s.tryNew(t, c)
			if b != nil {
				return b, nil
			}
			lastErr = err
		}
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("no %s balloon has room and no new one can be created", t.Name)
	}
	return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources.cpu_request_milli", "%dm: %v", c.milli, lastErr)
}

// openBalloon is a balloon chooseBalloon may put a container in, with its
// room now and after inflating to its maxCPUs, in milli-CPUs.
type openBalloon struct {
	b             *balloon
	room, maxRoom int64
}

// tryNew creates a balloon of t for c if one may exist and c fits in it.
func (s *state) tryNew(t *btype, c *container) (*balloon, error) {
	need := max(1, int((c.milli+999)/1000), t.MinCPUs)
	switch {
	case t.MaxBalloons > 0 && s.countOwn(t) >= t.MaxBalloons:
		return nil, fmt.Errorf("balloon type %s has its maxBalloons (%d)", t.Name, t.MaxBalloons)
	case t.MaxCPUs > 0 && int64(t.MaxCPUs)*1000 < c.milli:
		return nil, fmt.Errorf("above balloon type %s's maxCPUs (%d)", t.Name, t.MaxCPUs)
	case s.nFree < need:
		return nil, fmt.Errorf("a new %s balloon needs %d CPUs, %d are free", t.Name, need, s.nFree)
	}
	return s.newBalloon(t)
}
