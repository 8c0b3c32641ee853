package balloons

import (
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Pools implements policy.PoolReporter (ABI v1.2): one pool per balloon,
// named "TYPE[INSTANCE]", in the order DumpState lists them. Its CPUs are the
// balloon's own, its shared CPUs the idle ones it borrows
// (shareIdleCPUsInSame), its capacity 1000 per own CPU, what is allocated
// its containers' requests, and its memory nodes those its containers are
// pinned to ("" when the type leaves memory alone).
func (p *Policy) Pools(*abi.PoolsRequest) (*abi.PoolsResponse, error) {
	s := p.st
	resp := &abi.PoolsResponse{Pools: make([]*abi.Pool, 0, len(s.balloons))}
	for _, b := range s.balloons {
		resp.Pools = append(resp.Pools, &abi.Pool{
			Name: b.name(), Cpus: b.cpus.String(), SharedCpus: b.shared.String(),
			MemoryNodes:       s.pinning(b, false, 0).mems,
			CapacityMilliCpu:  uint64(1000 * b.cpus.Size()),
			AllocatedMilliCpu: uint64(b.milli),
			ContainerIds:      b.memberIDs(),
		})
	}
	return resp, nil
}
