package topologyaware

import (
	"strings"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

const fieldUpdateRequest = "resources.cpu_request_milli"

// UpdateContainer implements policy.ContainerUpdater: a resize re-evaluates
// the container's grant. Shared stays in its pool when it still fits there;
// exclusive and mixed grants keep the CPUs they had when they shrink and keep
// them plus new ones of the same pool when they grow; anything else (shared
// ↔ exclusive, or growth its pool cannot give) is placed again. A resize
// that fits nowhere is refused and changes nothing. Preserved, fixed and
// claim containers keep their CPUs. The answer updates the container itself
// and every container whose CPUs the change moved.
func (p *Policy) UpdateContainer(r *abi.UpdateContainerRequest) (*abi.UpdateContainerResponse, error) {
	s := p.st
	old := s.ctrs[r.GetContainer().GetId()]
	if old == nil || r.GetResources() == nil {
		return &abi.UpdateContainerResponse{}, nil
	}
	spec := old.spec.CloneVT()
	if spec.Resources == nil {
		spec.Resources = &abi.Resources{}
	}
	res := r.GetResources()
	spec.Resources.CpuRequestMilli, spec.Resources.CpuLimitMilli = res.GetCpuRequestMilli(), res.GetCpuLimitMilli()
	spec.Resources.MemoryRequestBytes, spec.Resources.MemoryLimitBytes = res.GetMemoryRequestBytes(), res.GetMemoryLimitBytes()
	req := s.cfg.classify(old.pod, spec)
	switch {
	case old.kind == kindPreserved || old.kind == kindFixed || old.kind == kindClaim,
		req.kind == old.kind && req.milli == old.milli && req.cores == old.cpus.Size():
		old.spec = spec
		return &abi.UpdateContainerResponse{}, nil
	}
	c, err := s.regrant(old, spec, req)
	if err != nil {
		return nil, err
	}
	updates := s.plainUpdates(c.id)
	own := &abi.ContainerUpdate{ContainerId: c.id}
	if c.sent != old.sent {
		own.CpusetCpus = c.sent
	}
	if c.mems != old.mems {
		own.CpusetMems = c.mems
	}
	if own.CpusetCpus != "" || own.CpusetMems != "" {
		updates = append(updates, own)
	}
	return &abi.UpdateContainerResponse{Updates: sortUpdates(updates)}, nil
}

// regrant replaces old's grant with one for req; on failure old stays.
func (s *state) regrant(old *container, spec *abi.Container, req request) (*container, error) {
	owns := func(k cpuKind) bool { return k == kindExclusive || k == kindMixed }
	if owns(old.kind) && owns(req.kind) && old.isolated == (old.isolated && req.isolate) && (old.isolated || !req.requireIsolated) {
		if c := s.resize(old, spec, req); c != nil {
			return c, nil
		}
	}
	s.remove(old.id)
	c, err := s.placeNear(old.pod, spec, old.pool.name)
	if err != nil {
		s.add(old)
		if pe, ok := err.(*abi.PolicyError); ok && pe.Field == fieldRequest {
			pe.Field = fieldUpdateRequest
		}
		return nil, err
	}
	return c, nil
}

// resize keeps an exclusive or mixed grant in its pool: a subset of its CPUs
// when it shrinks, its CPUs and new ones of the pool when it grows. It
// returns nil, changing nothing, when the pool cannot give that.
func (s *state) resize(old *container, spec *abi.Container, req request) *container {
	p, have, n := old.pool, old.cpus.Size(), req.cores
	fraction := int64(0)
	if req.kind == kindMixed {
		fraction = req.milli
	}
	var cpus cpuset.Set
	if n <= have {
		// Its own CPUs come back to p, which then gives n of them again.
		spare := p.free() + 1000*int64(have-n)
		if old.kind == kindMixed {
			spare += old.milli
		}
		if spare < fraction {
			return nil
		}
		cpus, _ = s.ix.pickPrio(old.cpus, n, nil, req.prio)
	} else {
		if old.kind == kindMixed {
			fraction -= old.milli
		}
		extra, _, ok := s.pickExclusive(p, n-have, old.isolated, max(fraction, 0), req.prio)
		if !ok {
			return nil
		}
		cpus = old.cpus.Union(extra)
	}
	s.remove(old.id)
	c := *old
	c.id, c.spec, c.kind, c.milli = strings.Clone(old.id), spec, req.kind, req.milli
	c.cpus, c.cpusText = cpus, cpus.String()
	s.add(&c)
	return &c
}
