package topologyaware

import (
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// container is a live container and what it was given.
type container struct {
	id   string
	pod  *abi.PodSandbox
	spec *abi.Container

	kind     cpuKind
	pool     *pool      // shared, exclusive, reserved (the pool of the reserved CPUs)
	milli    int64      // shared capacity it takes (shared, reserved)
	cpus     cpuset.Set // its own CPUs (exclusive, fixed)
	cpusText string
	isolated bool   // exclusive CPUs that are kernel-isolated
	pinCPU   bool   // the policy answers its cpuset_cpus
	mems     string // the cpuset_mems it was given
	sent     string // the cpuset_cpus it was last given ("" when none)
}

// state is the pool tree and every grant: the policy's whole mind.
type state struct {
	cfg   Config
	ix    *topoIndex
	res   resources
	pools []*pool
	leaf  map[uint32]*pool // CPU → the deepest pool holding it

	reservedPool    *pool // the deepest pool holding all reserved CPUs
	reservedText    string
	reservedGranted int64

	exclusive cpuset.Set // the union of all exclusive grants
	ctrs      map[string]*container
	sorted    []*container // ctrs by id
	// dirty: some pool's shared CPUs changed since updates last looked.
	dirty bool
}

func newState(cfg Config, ix *topoIndex) (*state, error) {
	res, err := resolve(cfg, ix)
	if err != nil {
		return nil, err
	}
	s := &state{cfg: cfg, ix: ix, res: res, pools: buildPools(ix, res), leaf: map[uint32]*pool{}, ctrs: map[string]*container{}}
	for _, p := range s.pools {
		for _, id := range p.cpus.Sorted() {
			s.leaf[id] = p // pre-order: deeper pools come later and win
		}
		if res.reserved.IsSubsetOf(p.cpus) {
			s.reservedPool = p
		}
	}
	s.reservedText = res.reserved.String()
	return s, nil
}

// add records c and accounts for what it holds.
func (s *state) add(c *container) {
	switch c.kind {
	case kindShared:
		for p := c.pool; p != nil; p = p.parent {
			p.granted += c.milli
		}
	case kindReserved:
		s.reservedGranted += c.milli
	case kindExclusive:
		s.exclusive = s.exclusive.Union(c.cpus)
		s.refreshShared()
	}
	if c.pinCPU {
		c.sent = s.cpusOf(c)
	}
	s.ctrs[c.id] = c
	if i, found := slices.BinarySearchFunc(s.sorted, c.id, byID); !found {
		s.sorted = slices.Insert(s.sorted, i, c)
	}
}

// remove forgets container id and frees what it held; unknown ids are no-ops.
func (s *state) remove(id string) {
	c := s.ctrs[id]
	if c == nil {
		return
	}
	delete(s.ctrs, id)
	if i, found := slices.BinarySearchFunc(s.sorted, id, byID); found {
		s.sorted = slices.Delete(s.sorted, i, i+1)
	}
	switch c.kind {
	case kindShared:
		for p := c.pool; p != nil; p = p.parent {
			p.granted -= c.milli
		}
	case kindReserved:
		s.reservedGranted -= c.milli
	case kindExclusive:
		s.exclusive = s.exclusive.Difference(c.cpus)
		s.refreshShared()
	}
}

// refreshShared recomputes every pool's shared CPUs from the exclusive grants.
func (s *state) refreshShared() {
	for _, p := range s.pools {
		if shared := p.sharable.Difference(s.exclusive); !shared.Equal(p.shared) {
			p.shared, p.sharedText = shared, shared.String()
			s.dirty = true
		}
	}
}

// cpusOf is the cpuset_cpus c should have now ("" when not pinned).
func (s *state) cpusOf(c *container) string {
	if !c.pinCPU {
		return ""
	}
	switch c.kind {
	case kindShared:
		return c.pool.sharedText
	case kindReserved:
		return s.reservedText
	case kindExclusive, kindFixed:
		return c.cpusText
	}
	return ""
}

// updates answers a ContainerUpdate for every pinned container whose CPUs
// changed since it was last told, except skip, sorted by container id. Only
// a change of some pool's shared CPUs changes what a container should have
// (add records the rest), so without one there is nothing to look at.
func (s *state) updates(skip string) []*abi.ContainerUpdate {
	if !s.dirty {
		return nil
	}
	s.dirty = false
	var out []*abi.ContainerUpdate
	for _, c := range s.sorted {
		if !c.pinCPU || c.id == skip {
			continue
		}
		if want := s.cpusOf(c); want != c.sent {
			c.sent = want
			out = append(out, &abi.ContainerUpdate{ContainerId: c.id, CpusetCpus: want})
		}
	}
	return out
}

func byID(c *container, id string) int { return strings.Compare(c.id, id) }

// adjustment is what c's creation answers.
func (c *container) adjustment() *abi.ContainerAdjustment {
	return &abi.ContainerAdjustment{CpusetCpus: c.sent, CpusetMems: c.mems}
}
