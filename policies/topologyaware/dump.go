package topologyaware

import (
	"encoding/json"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// The DumpState document. Every list is sorted (pools by id, grants and
// containers by container id), so equal states dump byte-identical JSON.
type (
	dumpState struct {
		Available     string          `json:"available"`
		Isolated      string          `json:"isolated,omitempty"`
		Reserved      string          `json:"reserved"`
		ReservedMilli int64           `json:"reservedMilli"`
		ReservedUsed  int64           `json:"reservedGrantedMilli"`
		Pools         []dumpPool      `json:"pools"`
		Containers    []dumpContainer `json:"containers"`
		Claims        []dumpClaim     `json:"claims,omitempty"`
	}
	dumpClaim struct {
		UID     string   `json:"uid"`
		Name    string   `json:"name,omitempty"`
		CPUs    string   `json:"cpus"`
		Devices []string `json:"devices"`
		Foreign bool     `json:"foreign,omitempty"`
	}
	dumpPool struct {
		ID        int         `json:"id"`
		Name      string      `json:"name"`
		Level     string      `json:"level"`
		Parent    *int        `json:"parent,omitempty"`
		CPUs      string      `json:"cpus"`
		Mems      string      `json:"mems"`
		Shared    string      `json:"shared"`
		Granted   int64       `json:"grantedSharedMilli"`
		Free      int64       `json:"freeSharedMilli"`
		Exclusive []dumpGrant `json:"exclusive,omitempty"`
	}
	dumpGrant struct {
		Container string `json:"container"`
		CPUs      string `json:"cpus"`
		Isolated  bool   `json:"isolated,omitempty"`
	}
	dumpContainer struct {
		ID        string   `json:"id"`
		Name      string   `json:"name,omitempty"`
		Namespace string   `json:"namespace,omitempty"`
		Kind      string   `json:"kind"`
		Pool      string   `json:"pool,omitempty"`
		Milli     int64    `json:"sharedMilli,omitempty"`
		CPUs      string   `json:"cpus"`
		Mems      string   `json:"mems"`
		Claims    []string `json:"claims,omitempty"`
		// MemZone and MemBytes: the memory nodes its memory is accounted
		// to and how much (memory accounting, nri-plugins' libmem).
		MemZone  string `json:"memZone,omitempty"`
		MemBytes int64  `json:"memBytes,omitempty"`
	}
)

// DumpState implements policy.StateDumper.
func (p *Policy) DumpState(*abi.DumpStateRequest) (*abi.DumpStateResponse, error) {
	js, err := json.MarshalIndent(p.st.dump(), "", "  ")
	if err != nil {
		return nil, err
	}
	return &abi.DumpStateResponse{Json: js}, nil
}

func (s *state) dump() dumpState {
	d := dumpState{
		Available: s.res.available.String(), Isolated: s.res.isolated.String(),
		Reserved: s.reservedText, ReservedMilli: s.res.reservedMilli, ReservedUsed: s.reservedGranted,
		Pools: []dumpPool{}, Containers: []dumpContainer{},
	}
	for _, p := range s.pools {
		dp := dumpPool{ID: p.id, Name: p.name, Level: levelNames[p.level], CPUs: p.cpus.String(), Mems: p.memsText,
			Shared: p.text(), Granted: p.granted, Free: p.free()}
		if p.parent != nil {
			dp.Parent = &p.parent.id
		}
		d.Pools = append(d.Pools, dp)
	}
	for _, c := range s.containers() {
		id := c.id
		dc := dumpContainer{ID: id, Name: c.spec.GetName(), Namespace: namespaceOf(c.pod, c.spec), Kind: c.kind.String(),
			CPUs: c.sent, Mems: c.mems, Claims: c.claims}
		if c.kind == kindShared || c.kind == kindReserved || c.kind == kindMixed {
			dc.Milli = c.milli
		}
		if r := s.mem.reqs[id]; r != nil {
			dc.MemZone, dc.MemBytes = r.zone.String(), r.size
		}
		if c.pool != nil && c.kind != kindPreserved && c.kind != kindFixed {
			dc.Pool = c.pool.name
		}
		if c.kind == kindExclusive || c.kind == kindMixed {
			if c.kind == kindExclusive {
				dc.CPUs = c.cpusText
			}
			dp := &d.Pools[c.pool.id]
			dp.Exclusive = append(dp.Exclusive, dumpGrant{Container: id, CPUs: c.cpusText, Isolated: c.isolated})
		}
		d.Containers = append(d.Containers, dc)
	}
	for _, uid := range sortedKeys(s.claims) {
		c := s.claims[uid]
		dc := dumpClaim{UID: uid, Name: c.spec.GetNamespace() + "/" + c.spec.GetName(), CPUs: c.cpusText, Foreign: c.foreign}
		for i, part := range c.parts {
			dc.Devices = append(dc.Devices, c.spec.GetResults()[i].GetDevice()+":"+part.String())
		}
		d.Claims = append(d.Claims, dc)
	}
	return d
}
