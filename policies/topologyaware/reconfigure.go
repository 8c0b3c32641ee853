package topologyaware

import (
	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Reconfigure implements policy.Reconfigurer. The new configuration is built
// into a fresh state: exclusive grants carry over unchanged (a configuration
// that would take their CPUs away is refused, naming the field), every other
// container is placed again, in its old pool where it still fits, and
// answers an update where its CPUs or memory nodes changed. On any error the
// old configuration stays in force: INVALID_ARGUMENT for a configuration that
// does not parse or check, FAILED_PRECONDITION for a valid one the running
// containers keep from applying live (liveError).
func (p *Policy) Reconfigure(r *abi.ReconfigureRequest) (*abi.ReconfigureResponse, error) {
	cfg, err := ParseConfig(r.GetConfig())
	if err != nil {
		return nil, err
	}
	old := p.st
	olds := old.containers()
	st, err := newState(cfg, old.ix, old.driver, cpuset.Set{})
	if err != nil {
		return nil, err
	}
	if err := st.carryClaims(old); err != nil {
		return nil, err
	}
	for _, o := range olds {
		id := o.id
		if o.kind != kindExclusive && o.kind != kindMixed {
			continue
		}
		if out := o.cpus.Difference(st.res.available); !out.IsEmpty() {
			return nil, liveError(fieldAvailable, "CPUs %s are exclusively allocated to container %s", out, id)
		}
		if in := o.cpus.Intersection(st.res.reserved); !in.IsEmpty() {
			return nil, liveError(fieldReserved, "CPUs %s are exclusively allocated to container %s", in, id)
		}
		c := *o
		c.pool, c.pinCPU = st.poolHolding(o.cpus, o.mems), cfg.PinCPU
		if q := st.named(o.pool.name); o.kind == kindMixed && q != nil && o.cpus.IsSubsetOf(q.cpus) {
			c.pool = q // its shared part stays in the pool of that name
		}
		st.add(&c)
	}
	for _, o := range olds {
		id := o.id
		if o.kind == kindExclusive || o.kind == kindMixed {
			continue
		}
		if o.kind == kindPreserved && !o.pinCPU {
			// Adopted unpinned by Synchronize (it started without a cpuset):
			// kept as it is, as Synchronize keeps it, not placed anew.
			c := st.adopted(o.pod, o.spec, kindPreserved)
			c.pinCPU = false
			st.add(c)
			continue
		}
		c, err := st.placeNear(o.pod, o.spec, o.pool.name)
		if err != nil {
			return nil, liveError("", "container %s no longer fits: %v", id, err)
		}
		if !st.cfg.PinMemory {
			c.mems = o.mems
		}
	}
	var updates []*abi.ContainerUpdate
	st.changed.Clear()
	for _, c := range st.containers() {
		o := old.ctrs[c.id]
		c.sent = st.cpusOf(c) // a later grant may have shrunk its pool since add
		if u := abi.ChangedUpdate(c.id, o.sent, c.sent, o.mems, c.mems); u != nil {
			updates = append(updates, u)
		}
	}
	p.st = st
	return &abi.ReconfigureResponse{WantsDra: cfg.DRA, Updates: updates}, nil
}
