package topologyaware

import (
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/dirty"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
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
	isolated bool     // exclusive CPUs that are kernel-isolated
	claims   []string // the DRA claims it holds (claim)
	pinCPU   bool     // the policy answers its cpuset_cpus
	hideHT   bool     // hide-hyperthreads: one thread of each core of its grant
	mems     string   // the cpuset_mems it was given
	memZone  nodeMask // the memory nodes its memory is accounted to (0: not accounted)
	memKinds memKinds // the kinds of memory it asked for
	memSeq   int64    // its memory request's age (memAlloc.seq)
	sent     string   // the cpuset_cpus it was last given ("" when none)
}

// state is the pool tree and every grant: the policy's whole mind.
type state struct {
	cfg   Config
	ix    *topoIndex
	res   resources
	pools []*pool
	leaf  []*pool // CPU id → the deepest pool holding it

	burstableLevel  level // the pool level of unlimitedBurstable that the tree has
	reservedPool    *pool // the deepest pool holding all reserved CPUs
	reservedText    string
	reservedGranted int64

	exclusive cpuset.Set // the union of all exclusive grants: containers' and claims'
	ctrs      map[string]*container
	// changed: the pools whose shared CPUs changed since updates last looked.
	changed dirty.List[*pool]
	moved   []*container // scratch for updates
	left    []*pool      // scratch for choose
	free    []int64      // scratch for choose: free shared capacity by pool id
	epoch   int          // marks the pools one refresh visited

	driver       string // the DRA driver name, the vendor of claims' CDI devices
	devices      []*nodeDevice
	deviceByName map[string]*nodeDevice
	claims       map[string]*claim

	mem      *memAlloc    // memory accounting per zone (nri-plugins' libmem)
	memMoved []*container // containers whose memory nodes an allocation widened
	maskOf   []nodeMask   // the distinct pool memory nodes, by pool.maskID
	offers   []memOffer   // scratch: one decision's memory offers, by pool.maskID
	choice   memChoice    // scratch: one decision's memory offers
}

func newState(cfg Config, ix *topoIndex, driver string, claimed cpuset.Set) (*state, error) {
	res, err := resolve(cfg, ix, claimed)
	if err != nil {
		return nil, err
	}
	if driver == "" {
		driver = defaultDriver
	}
	s := &state{cfg: cfg, ix: ix, res: res, pools: buildPools(ix, res), leaf: make([]*pool, len(ix.cpus)), ctrs: map[string]*container{},
		driver: driver, claims: map[string]*claim{}, mem: newMemAlloc(ix)}
	for _, p := range s.pools {
		if p.maskID = slices.Index(s.maskOf, p.memMask); p.maskID < 0 {
			p.maskID = len(s.maskOf)
			s.maskOf = append(s.maskOf, p.memMask)
		}
	}
	s.offers = make([]memOffer, len(s.maskOf))
	s.mem.watch(s.maskOf)
	for _, p := range s.pools {
		p.excl = &s.exclusive
		for _, id := range p.cpus.Sorted() {
			s.leaf[id] = p // pre-order: deeper pools come later and win
		}
		if res.reserved.IsSubsetOf(p.cpus) {
			s.reservedPool = p
		}
	}
	s.reservedText = res.reserved.String()
	s.burstableLevel = s.existingLevel(levelOf(cfg.UnlimitedBurstable))
	s.buildDevices()
	return s, nil
}

// levelOf is the pool level of a topology level's name; package for one
// it does not know.
func levelOf(name string) level {
	lv, _ := levelByName(name)
	return lv
}

// levelByName is the pool level of a topology level's name, and whether
// the name is one.
func levelByName(name string) (level, bool) {
	for lv, n := range []string{"system", "package", "die", "numa", "l3cache"} {
		if n == name {
			return level(lv), true
		}
	}
	return levelSocket, false
}

// existingLevel is lv when the tree has pools at that level, else the level
// nri-plugins falls back to (findExistingTopologyLevel): that of the first
// pool, in post-order, at lv or above it.
func (s *state) existingLevel(lv level) level {
	byPost := slices.Clone(s.pools)
	slices.SortFunc(byPost, func(a, b *pool) int { return a.postID - b.postID })
	for _, p := range byPost {
		if l := p.topologyLevel(); l <= lv {
			if l != lv {
				policy.Log.Warnf("unlimitedBurstable: no %s pools on this node; using %s pools", levelNames[lv], levelNames[l])
			}
			return l
		}
	}
	return levelSocket
}

// token is the milli-CPU c holds only so that it is placed somewhere: a
// shared container that requests no CPU holds 1m (nri-plugins grants it
// nothing).
func (c *container) token() int64 {
	if c.milli == 1 && c.spec.GetResources().GetCpuRequestMilli() <= 0 {
		return 1
	}
	return 0
}

// add records c and accounts for what it holds.
func (s *state) add(c *container) {
	switch c.kind {
	case kindShared:
		token := c.token()
		for p := c.pool; p != nil; p = p.parent {
			p.granted += c.milli
			p.tokens += token
		}
	case kindReserved:
		s.reservedGranted += c.milli
	case kindExclusive:
		s.take(c.cpus)
	case kindMixed:
		for p := c.pool; p != nil; p = p.parent {
			p.granted += c.milli
		}
		s.take(c.cpus)
	case kindClaim: // its claims took their CPUs; its own request is shared
		for p := c.pool; p != nil; p = p.parent {
			p.granted += c.milli
		}
	}
	if c.pinCPU {
		c.sent = s.cpusOf(c)
	}
	if c.colocates() {
		c.pool.colocated++
	}
	if c.followsPool() {
		i, _ := slices.BinarySearchFunc(c.pool.members, c.id, byID)
		c.pool.members = slices.Insert(c.pool.members, i, c)
	}
	s.account(c)
	s.ctrs[c.id] = c
}

// colocates tells whether c counts in its pool's colocated containers, as
// nri-plugins counts grants of normal (not reserved) CPUs in a pool.
func (c *container) colocates() bool {
	return c.pool != nil && (c.kind == kindShared || c.kind == kindExclusive || c.kind == kindMixed)
}

func byID(c *container, id string) int { return strings.Compare(c.id, id) }

// containers lists the live containers by id. Only the calls that look at
// all of them use it; a decision never does.
func (s *state) containers() []*container {
	list := make([]*container, 0, len(s.ctrs))
	for _, c := range s.ctrs {
		list = append(list, c)
	}
	slices.SortFunc(list, func(a, b *container) int { return strings.Compare(a.id, b.id) })
	return list
}

// remove forgets container id and frees what it held; unknown ids are no-ops.
func (s *state) remove(id string) {
	c := s.ctrs[id]
	if c == nil {
		return
	}
	delete(s.ctrs, id)
	s.mem.release(id)
	if c.colocates() {
		c.pool.colocated--
	}
	if c.followsPool() {
		if i, found := slices.BinarySearchFunc(c.pool.members, c.id, byID); found {
			c.pool.members = slices.Delete(c.pool.members, i, i+1)
		}
	}
	switch c.kind {
	case kindShared:
		token := c.token()
		for p := c.pool; p != nil; p = p.parent {
			p.granted -= c.milli
			p.tokens -= token
		}
	case kindReserved:
		s.reservedGranted -= c.milli
	case kindExclusive:
		s.give(c.cpus)
	case kindMixed:
		for p := c.pool; p != nil; p = p.parent {
			p.granted -= c.milli
		}
		s.give(c.cpus)
	case kindClaim:
		for p := c.pool; p != nil; p = p.parent {
			p.granted -= c.milli
		}
	}
}

// adjustment is what c's creation answers.
func (c *container) adjustment() *abi.ContainerAdjustment {
	return &abi.ContainerAdjustment{CpusetCpus: c.sent, CpusetMems: c.mems}
}
