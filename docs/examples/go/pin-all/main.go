// Command pin-all is the Go policy of docs/writing-policies.md: every
// container gets the node's CPUs but those the configuration reserves, and the
// memory nodes of the CPUs it gets.
package main

import (
	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// Config is the policy's configuration.
type Config struct {
	// Reserved CPUs ("0-1") no container gets: the system's.
	Reserved string `json:"reserved"`
}

// PinAll is the policy. Its answers depend only on Init (configuration and
// topology), so restoring after a rebuild needs nothing from the journal.
type PinAll struct {
	cpus, mems string
}

// Describe implements policy.Policy.
func (*PinAll) Describe() policy.Description {
	return policy.Description{Name: "pin-all", Version: "0.1.0", Summary: "every container gets every unreserved CPU"}
}

// Init implements policy.Initializer.
func (p *PinAll) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	var cfg Config
	if err := policyconfig.Decode(r.GetConfig(), &cfg); err != nil {
		return nil, err
	}
	reserved, err := cpuset.Parse(cfg.Reserved)
	if err != nil {
		return nil, policyconfig.Errorf("config.reserved", "%v", err)
	}
	var cpus, nodes []uint32
	for _, c := range r.GetTopology().GetCpus() {
		if !reserved.Contains(c.GetId()) {
			cpus = append(cpus, c.GetId())
			nodes = append(nodes, c.GetNumaNode())
		}
	}
	if len(cpus) == 0 {
		return nil, policyconfig.Errorf("config.reserved", "reserves every CPU of the node (%s)", cfg.Reserved)
	}
	p.cpus, p.mems = cpuset.New(cpus...).String(), cpuset.New(nodes...).String()
	policy.Log.Infof("pin-all: containers get CPUs %s, memory nodes %s", p.cpus, p.mems)
	return &abi.InitResponse{}, nil
}

// CreateContainer implements policy.ContainerCreator.
func (p *PinAll) CreateContainer(*abi.CreateContainerRequest) (*abi.CreateContainerResponse, error) {
	return &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{CpusetCpus: p.cpus, CpusetMems: p.mems}}, nil
}

func init() { policy.Register(&PinAll{}) }

func main() {}
