package cli

import (
	"fmt"
	"os"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

// referenceMachine names the machine check and simulate run on without
// --sysfs (topologytest.Reference2Socket), in their output.
const referenceMachine = "reference 2-socket server (built in): 2 sockets × 8 cores × 2 threads, 32 CPUs, 2 NUMA nodes of 64 GiB"

// referenceTopology discovers the reference machine: its sysfs tree is
// written to a temporary directory and read back as the agent reads /sys, so
// the policy sees exactly what it would see on such a server.
func referenceTopology() (*abi.Topology, error) {
	dir, err := os.MkdirTemp("", "nriwasm-reference-sysfs-")
	if err != nil {
		return nil, fmt.Errorf("reference machine: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := topologytest.Reference2Socket().Write(dir); err != nil {
		return nil, fmt.Errorf("reference machine: write its sysfs tree: %w", err)
	}
	topo, err := topology.Discover(dir)
	if err != nil {
		return nil, fmt.Errorf("reference machine: %w", err)
	}
	return topo, nil
}
