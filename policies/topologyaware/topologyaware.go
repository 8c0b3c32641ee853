// Package topologyaware is the topology-aware resource policy: it builds a tree
// of CPU pools from the node's hardware (root, sockets, dies, NUMA nodes, L3
// caches) and
// places every container in the smallest pool that fits it, giving Guaranteed
// containers that ask for whole CPUs exclusive cores, those with a fraction
// above one CPU exclusive cores plus shared CPUs, and everything else the
// shared CPUs of its pool. It follows containers/nri-plugins' topology-aware
// policy: the same configuration fields and pod annotations, so a user's
// configuration carries over (RATIONALE.md lists where it differs).
//
// Configuration (YAML or JSON; unknown fields are errors; README.md has the
// whole list, nri-plugins' fields that are ignored or refused included):
//
//	reservedResources:      # CPUs for kube-system and reservedPoolNamespaces
//	  cpu: 750m             # a quantity ("750m", "2"), "cpuset:0-1" or "exclude-cpuset:2-63"
//	availableResources:     # the CPUs the policy may hand out; default: all online CPUs
//	  cpu: cpuset:2-63      # "cpuset:...", "exclude-cpuset:..." or a whole-CPU quantity
//	reservedPoolNamespaces: ["monitoring", "infra-*"]   # globs; kube-system always
//	preferIsolatedCPUs: true   # single-CPU exclusive grants use isolcpus CPUs first
//	preferSharedCPUs: false    # no exclusive CPUs unless annotated
//	pinCPU: true               # answer cpuset_cpus
//	pinMemory: true            # answer cpuset_mems
//	unlimitedBurstable: package  # pool level of Burstable containers without a CPU limit
//	colocatePods: false        # affinity (weight 10) to the other containers of the pod
//	colocateNamespaces: false  # affinity (weight 10) to the containers of the namespace
//	dra:                       # ours: DRA CPU devices, one per NUMA node (default off)
//	  enabled: true
//
// An empty configuration is the nri-plugins Helm chart's default: 750m reserved.
// The configuration that chart writes starts as it is: nri-plugins' fields
// that do not change a placement (agent, control, log, instrumentation,
// controllableInterrupts) are accepted with a warning in the log each, and
// those this policy does not implement (CPU and scheduling classes, CPU
// priorities) are accepted at the value that means "off" and
// refused otherwise, all of them in one error.
//
// DRA (with dra.enabled): one device per NUMA node, "cpudevnuma%03d", whose
// consumable capacity "dra.cpu/cpu" is its grantable CPUs (isolated ones
// included). Allocate takes a claim's CPUs out of the shared CPUs (then the
// isolated ones) and answers the CDI env DRA_CPUSET_<uid>=<cpuset>, the uid
// as it is. A container holds the claim when its CDI devices name
// "<driver>/claim=<uid>-<n>" (abi.CDIDeviceName; the driver name from Init,
// by default topology-aware.nri.io); it is pinned to the claim's CPUs, and
// when it requests CPU of its own, its pool's shared CPUs too.
//
// Pod annotations (container form wins over pod form, which wins over the bare key):
//
//	prefer-shared-cpus.resource-policy.nri.io/pod: "true"
//	prefer-isolated-cpus.resource-policy.nri.io/container.<name>: "true"
//	prefer-reserved-cpus.resource-policy.nri.io/pod: "true"
//	cpu.preserve.resource-policy.nri.io/container.<name>: "true"     # leave cpuset_cpus alone
//	memory.preserve.resource-policy.nri.io/pod: "true"               # leave cpuset_mems alone
//	hide-hyperthreads.resource-policy.nri.io/pod: "true"             # one thread of each core
//	unlimited-burstable.resource-policy.nri.io/pod: numa             # as unlimitedBurstable
//	memory-type.resource-policy.nri.io/container.<name>: hbm         # dram, pmem, hbm; default dram,pmem
//	require-isolated-cpus.resource-policy.nri.io/pod: "true"         # isolated CPUs or refused
//	resource-policy.nri.io/affinity: "back: [front]"                 # pull towards front's pool
//	resource-policy.nri.io/anti-affinity: "back: [db]"               # push away from db's pool
//
// Recognised nri-plugins annotations this policy does not implement
// (memory-type, …; README.md lists them) are logged as warnings.
//
// Every answer is a function of the configuration, the topology and the calls
// seen since Init: no clock, no randomness, and every map is sorted before it
// reaches an answer.
package topologyaware

import (
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// Name names the policy in the agent's configuration and its DRA driver.
const Name = "topology-aware"

// Policy is the topology-aware policy. Create it with New; it is not safe for
// concurrent use (the host serializes calls). A stopped or removed
// container's CPUs go back to its pool at once (forget).
type Policy struct {
	policy.Description
	containers.Forget
	st *state // nil before Init
}

// New returns a policy ready to register.
func New() *Policy {
	p := &Policy{Description: policy.Description{Name: Name, Version: "0.2.0",
		Summary: "places containers in topology-aligned CPU pools: exclusive cores for whole-CPU Guaranteed containers, shared CPUs for the rest"}}
	p.Forget = p.forget
	return p
}

// Policy serves every call but the pod-sandbox events.
var _ policy.ResourcePolicy = (*Policy)(nil)
