package balloons

import (
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Dump is the policy's state as DumpState answers it (JSON).
type Dump struct {
	Available  string          `json:"available"`
	Reserved   string          `json:"reserved,omitempty"`
	Free       string          `json:"free"`
	Balloons   []DumpBalloon   `json:"balloons"`
	Containers []DumpContainer `json:"containers"`
}

// DumpBalloon is one balloon.
type DumpBalloon struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Instance   int    `json:"instance"`
	CPUs       string `json:"cpus"`
	SharedIdle string `json:"sharedIdle,omitempty"`
	// Parts are a composite balloon's parts, "NAME[N]:CPUS", each followed
	// by its own parts when it is composite too.
	Parts        []string `json:"parts,omitempty"`
	RequestMilli int64    `json:"requestMilli"`
	MinCPUs      int      `json:"minCPUs"`
	MaxCPUs      int      `json:"maxCPUs"`
	Containers   []string `json:"containers"`
	Claim        string   `json:"claim,omitempty"`
	Device       string   `json:"device,omitempty"`
}

// DumpContainer is one container.
type DumpContainer struct {
	ID        string `json:"id"`
	Namespace string `json:"namespace"`
	Balloon   string `json:"balloon,omitempty"`
	CPUs      string `json:"cpus"`
	Mems      string `json:"mems"`
	Milli     int64  `json:"requestMilli"`
	HideHT    bool   `json:"hideHyperthreads,omitempty"`
	// MemoryTypes are the types of its memory-type annotation
	// ("DRAM,PMEM"); empty when its balloon type's memoryTypes apply.
	MemoryTypes string `json:"memoryTypes,omitempty"`
}

// DumpState implements policy.StateDumper.
func (p *Policy) DumpState(*abi.DumpStateRequest) (*abi.DumpStateResponse, error) {
	d := p.st.dump()
	return &abi.DumpStateResponse{Json: d.appendJSON(nil)}, nil
}

func (s *state) dump() Dump {
	d := Dump{Available: s.available.String(), Reserved: s.reservedSet.String(), Free: s.freeSet().String(),
		Balloons: []DumpBalloon{}, Containers: []DumpContainer{}}
	for _, b := range s.balloons {
		db := DumpBalloon{Name: b.name(), Type: b.t.Name, Instance: b.inst, CPUs: b.cpus.String(), SharedIdle: b.shared.String(),
			RequestMilli: b.milli, MinCPUs: b.t.MinCPUs, MaxCPUs: b.t.MaxCPUs, Containers: b.memberIDs(), Claim: b.claim}
		for _, p := range b.parts {
			p.walk(func(x *balloon) { db.Parts = append(db.Parts, x.name()+":"+x.cpus.String()) })
		}
		if b.t.PublishDRADevices {
			db.Device = deviceName(b.t.Name, b.inst)
		}
		d.Balloons = append(d.Balloons, db)
	}
	for _, id := range sortedKeys(s.ctrs) {
		c := s.ctrs[id]
		cpus, mems := c.lists()
		dc := DumpContainer{ID: id, Namespace: c.ns, CPUs: cpus, Mems: mems, Milli: c.milli, HideHT: c.hideHT, MemoryTypes: c.memTypes.String()}
		if c.b != nil {
			dc.Balloon = c.b.name()
		}
		d.Containers = append(d.Containers, dc)
	}
	return d
}
