package topologyaware

import (
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// reservedPoolName names the reserved CPUs in Pools; tree pools are "root",
// "socketN", "dieN", "socketN/dieM" and "nodeN", so it cannot clash.
const reservedPoolName = "reserved"

// Pools implements policy.PoolReporter (ABI v1.2): every pool of the tree in
// pre-order, then the reserved CPUs. A tree pool's capacity is its sharable
// CPUs (reserved and isolated ones aside); what is allocated is its
// exclusive grants (whole CPUs) plus the shared milli-CPU granted in its
// subtree; its containers are those placed in that very pool.
func (p *Policy) Pools(*abi.PoolsRequest) (*abi.PoolsResponse, error) {
	s := p.st
	placed := make(map[*pool][]string, len(s.pools))
	var reserved []string
	for _, c := range s.containers() {
		switch {
		case c.kind == kindReserved:
			reserved = append(reserved, c.id)
		case c.pool != nil && c.kind != kindPreserved && c.kind != kindFixed:
			placed[c.pool] = append(placed[c.pool], c.id)
		}
	}
	resp := &abi.PoolsResponse{Pools: make([]*abi.Pool, 0, len(s.pools)+1)}
	for _, pl := range s.pools {
		sharable := int64(pl.sharable.Size())
		resp.Pools = append(resp.Pools, &abi.Pool{
			Name: pl.name, Cpus: pl.cpus.String(), SharedCpus: pl.text(), MemoryNodes: pl.memsText,
			CapacityMilliCpu:  uint64(1000 * sharable),
			AllocatedMilliCpu: uint64(1000*(sharable-int64(pl.nShared)) + pl.granted),
			ContainerIds:      placed[pl],
		})
	}
	if !s.res.reserved.IsEmpty() && s.reservedPool != nil {
		resp.Pools = append(resp.Pools, &abi.Pool{
			Name: reservedPoolName, Cpus: s.reservedText, SharedCpus: s.reservedText,
			MemoryNodes:      s.reservedPool.memsText,
			CapacityMilliCpu: uint64(s.res.reservedMilli), AllocatedMilliCpu: uint64(s.reservedGranted),
			ContainerIds: reserved,
		})
	}
	return resp, nil
}
