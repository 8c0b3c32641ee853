package topologyaware

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// Topology hints: where the storage and devices a container writes to live
// (the host resolves each mount's and device's locality from sysfs; which
// of them count and how is decided here, as nri-plugins' cache and
// topology-aware policy decide it).
const (
	keyTopologyHints       = "topologyhints." + containers.AnnotationDomain
	keyStrictTopologyHints = "strict.topologyhints." + containers.AnnotationDomain

	// overfitPenalty scales the score of a pool wider than a hint
	// (nri-plugins' OverfitPenalty).
	overfitPenalty = 0.9
)

// hint is one topology hint, resolved against the topology: cpus are the
// hint's CPUs, or those of its NUMA nodes (nri-plugins'
// ResolvePartialHints), empty for a hint of sockets only.
type hint struct {
	provider string
	cpus     cpuset.Set // the CPUs it names, or those of its nodes
	numaCPUs cpuset.Set // the CPUs of the NUMA nodes it names
	numas    cpuset.Set
	sockets  cpuset.Set
}

// ignoredMountPrefixes are host or container paths whose mounts give no
// hints: small files, service files and host libraries (nri-plugins:
// getTopologyHintsForMount).
var ignoredMountPrefixes = []string{"/.nri-resource-policy", "/etc/", "/dev/termination-log", "/lib/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/"}

// kubeletVolume matches the config map and secret volumes kubelet mounts.
var kubeletVolume = regexp.MustCompile(`(kubelet)?/pods/[[:xdigit:]-]+/volumes/kubernetes\.io~(configmap|secret)/`)

// hintsOf returns the hints that count for c: those of its writable mounts
// outside the ignored paths and of its writable devices, as the
// topologyhints annotation allows ("false"/"none": no hints; a list of
// "mounts", "devices", "pod-resources", "all"). The first hint of a provider
// wins.
func (s *state) hintsOf(pod *abi.PodSandbox, c *abi.Container) []hint {
	if len(c.GetMounts()) == 0 && len(c.GetDevices()) == 0 {
		return nil
	}
	mounts, devices := true, true
	if v, ok := effectiveAnnotation(pod, c, keyTopologyHints); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			if !b {
				return nil
			}
		} else {
			mounts, devices = false, false
			for _, pref := range strings.Split(v, ",") {
				switch pref {
				case "mounts":
					mounts = true
				case "devices":
					devices = true
				case "all":
					mounts, devices = true, true
				case "pod-resources":
					// Kubelet's pod resources API is not read: no hints from it.
				case "none":
					return nil
				default:
					policy.Log.Warnf("container %s: annotation %s=%q: ignoring %q: want mounts, devices, pod-resources, all or none", c.GetId(), keyTopologyHints, v, pref)
				}
			}
		}
	}
	var out []hint
	add := func(hs []*abi.TopologyHint) {
		for _, h := range hs {
			if slices.ContainsFunc(out, func(x hint) bool { return x.provider == h.GetProvider() }) {
				continue
			}
			if r, ok := s.resolveHint(c, h); ok {
				out = append(out, r)
			}
		}
	}
	if mounts {
		for _, m := range c.GetMounts() {
			if len(m.GetHints()) > 0 && hintedMount(m) {
				add(m.GetHints())
			}
		}
	}
	if devices {
		for _, d := range c.GetDevices() {
			if !d.GetReadOnly() {
				add(d.GetHints())
			}
		}
	}
	return out
}

// hintedMount tells whether a mount's hints count: not read-only, not one of
// the ignored paths or kubelet's config map and secret volumes.
func hintedMount(m *abi.Mount) bool {
	if slices.Contains(m.GetOptions(), "ro") {
		return false
	}
	for _, p := range ignoredMountPrefixes {
		if strings.HasPrefix(m.GetSource(), p) || strings.HasPrefix(m.GetDestination(), p) {
			return false
		}
	}
	return !kubeletVolume.MatchString(m.GetSource()) && !kubeletVolume.MatchString(m.GetDestination())
}

// resolveHint parses a hint from the host; one that does not parse is logged
// and dropped (nri-plugins scores it 0 after a warning).
func (s *state) resolveHint(c *abi.Container, h *abi.TopologyHint) (hint, bool) {
	r := hint{provider: h.GetProvider()}
	var err error
	if r.cpus, err = cpuset.Parse(h.GetCpus()); err == nil {
		if r.numas, err = cpuset.Parse(h.GetNumas()); err == nil {
			r.sockets, err = cpuset.Parse(h.GetSockets())
		}
	}
	if err != nil {
		policy.Log.Warnf("container %s: ignoring topology hint from %s: %v", c.GetId(), h.GetProvider(), err)
		return hint{}, false
	}
	for n := range r.numas.All() {
		if slices.Contains(s.ix.NodeIDs(), n) {
			r.numaCPUs = r.numaCPUs.Union(s.ix.NodeCPUs(n))
		}
	}
	if r.cpus.IsEmpty() {
		r.cpus = r.numaCPUs
	}
	return r, !r.cpus.IsEmpty() || !r.sockets.IsEmpty()
}

// score is how well p fits h, 0 to 1 (nri-plugins' HintScore of each
// node kind): the share of the hint's CPUs in p; for a hint of sockets only,
// 1 for a socket it names, 1/(its nodes) for one of their NUMA nodes,
// overfitPenalty for the root.
func (s *state) score(p *pool, h hint) float64 {
	if !h.cpus.IsEmpty() {
		return float64(h.cpus.Intersection(p.cpus).Size()) / float64(h.cpus.Size())
	}
	pkgs := s.ix.PackagesOf(p.cpus)
	if pkgs.Intersection(h.sockets).IsEmpty() {
		return 0
	}
	switch p.level {
	case levelRoot:
		return overfitPenalty
	case levelSocket, levelDie:
		return 1
	}
	nodes := 0
	for _, n := range s.ix.NodeIDs() {
		if s.ix.PackagesOf(s.ix.NodeCPUs(n)).IsSubsetOf(pkgs) {
			nodes++
		}
	}
	return 1 / float64(max(nodes, 1))
}

// withHints puts first the pools that fit c's hints best (nri-plugins'
// compareScores, right after affinity): the higher product of the scores
// wins; when both are 0, the higher product of the non-zero scores; on a tie
// of a non-zero product the deeper pool, then the lower id. With no score
// anywhere, next decides.
func (s *state) withHints(hs []hint, next order) order {
	if len(hs) == 0 {
		return next
	}
	combined := make([]float64, len(s.pools))
	nonZero := make([]float64, len(s.pools))
	for _, p := range s.pools {
		comb, nz := 1.0, 0.0
		for _, h := range hs {
			sc := s.score(p, h)
			comb *= sc
			if sc != 0 {
				if nz == 0 {
					nz = sc
				} else {
					nz *= sc
				}
			}
		}
		combined[p.id], nonZero[p.id] = comb, nz
	}
	return func(a, b *pool, free []int64) int {
		ca, cb := combined[a.id], combined[b.id]
		if ca != cb {
			return first(ca > cb)
		}
		na, nb := nonZero[a.id], nonZero[b.id]
		if ca == 0 && na != nb {
			return first(na > nb)
		}
		if ca != 0 || na != 0 {
			if a.depth != b.depth {
				return first(a.depth > b.depth)
			}
			return first(a.postID < b.postID)
		}
		return next(a, b, free)
	}
}

// misaligned returns what of a grant falls outside a strict hint
// (nri-plugins' verifyStrictTopologyHints): the CPUs outside the hint's CPUs
// or its nodes' CPUs, and the memory nodes outside those of the hint's CPUs
// or the hint's nodes.
func (s *state) misaligned(h hint, cpus, mems cpuset.Set) (badCPUs, badMems cpuset.Set) {
	for _, aligned := range []cpuset.Set{h.cpus, h.numaCPUs} {
		if !aligned.IsEmpty() {
			badCPUs = badCPUs.Union(cpus.Difference(aligned))
		}
	}
	var cpuMems cpuset.Set
	for _, n := range s.ix.NodeIDs() {
		if !s.ix.NodeCPUs(n).Intersection(h.cpus).IsEmpty() {
			cpuMems = cpuMems.Union(cpuset.New(n))
		}
	}
	for _, aligned := range []cpuset.Set{cpuMems, h.numas} {
		if !aligned.IsEmpty() {
			badMems = badMems.Union(mems.Difference(aligned))
		}
	}
	return badCPUs, badMems
}
