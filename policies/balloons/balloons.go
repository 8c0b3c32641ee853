// Package balloons is the balloons resource policy: containers run in
// "balloons", sets of CPUs that inflate and deflate as containers come and
// go, with types that say which containers a balloon takes, how big it may
// grow, how many may exist and which CPUs it prefers. It follows
// containers/nri-plugins' balloons policy: the same configuration fields and
// pod annotations, so a user's configuration carries over (RATIONALE.md
// lists where it differs).
//
// Configuration (YAML or JSON; unknown fields are errors naming the field;
// nri-plugins fields that change no placement, such as agent, control, log,
// instrumentation, idleCPUClass and a type's cpuClass, are accepted with a
// warning; RATIONALE.md lists them and those refused):
//
//	reservedResources: {cpu: 750m}      # the reserved balloon: a quantity (its minCPUs) or "cpuset:0-1"
//	availableResources: {cpu: cpuset:2-63}  # or "exclude-cpuset:..."; default: every online CPU
//	reservedPoolNamespaces: [monitoring] # globs, besides kube-system, for the reserved balloon
//	allocatorTopologyBalancing: false    # spread new balloons over packages/dies/nodes (true) or pack them
//	preferSpreadOnPhysicalCores: false   # one thread per core first
//	pinCPU: true                         # answer cpuset_cpus
//	pinMemory: true                      # answer cpuset_mems (a type may override)
//	preserve: {matchExpressions: [...]}  # containers left alone
//	balloonTypes:                        # matched in list order; reserved first and default last unless listed
//	  - name: fast
//	    namespaces: [prod-*]             # globs
//	    matchExpressions:                # {key, operator, values}; keys name, namespace, qosclass, id,
//	      - {key: pod/labels/tier, operator: In, values: [fast]}  # labels/K, pod/name, pod/labels/K, ...
//	    minCPUs: 2                       # size bounds; maxCPUs 0 = unlimited, -1 = never runs here
//	    maxCPUs: 8
//	    minBalloons: 1                   # created at Init (by allocatorPriority high, normal, low, none)
//	    maxBalloons: 4                   # 0 = unlimited
//	    allocatorPriority: high
//	    preferNewBalloons: false         # a new balloon before filling existing ones
//	    preferSpreadingPods: false       # a pod's containers in different balloons
//	    preferPerNamespaceBalloon: false # one balloon per namespace
//	    groupBy: ${pod/labels/app}       # containers with the same value share a balloon
//	    shareIdleCPUsInSame: numa        # also use idle CPUs of the same system|package|die|numa|l2cache|core
//	    preferCloseToDevices: [/sys/class/net/eth0]  # also /sys/class/drm/card0 and other /sys/class/CLASS/NAME of a
//	                                     # PCI function (ABI v1.5), /sys/bus/pci/devices/ADDR, /sys/devices/pciDDDD:BB/.../ADDR[/...],
//	                                     # /sys/devices/system/node/nodeN, .../cpu/cpuN/cache/indexM (its CPUs);
//	                                     # a device the node lacks, and .../cpu/cpuN (no CPUs in nri-plugins either),
//	                                     # are logged and ignored; podresourceapi: is refused
//	    preferIsolCpus: false            # kernel-isolated CPUs first
//	    preferCoreType: performance      # or efficient: nri-plugins' high (low) CPU priority class, by base
//	                                     # frequency, core type and energy-performance preference; other types avoid it
//	    hideHyperthreads: false          # containers get one thread per core
//	    memoryTypes: [DRAM]              # DRAM, HBM, PMEM
//	    components: [{balloonType: a}, {balloonType: b}]  # a composite balloon: its CPUs are its parts',
//	                                     # which may be composite too ("reserved" may be composite)
//	    componentCreation: all           # or balance-balloons: one part, the first whose type and the types
//	                                     # it is made of have the fewest instances
//	    publishDRADevices: false         # ours: each instance 0…maxBalloons-1 is a DRA device
//
// Pod annotations (container form wins over pod form, which wins over the
// bare key):
//
//	balloon.balloons.resource-policy.nri.io/container.<name>: fast  # the balloon type
//	cpu.preserve.resource-policy.nri.io/pod: "true"       # leave the CPUs alone (no balloon)
//	memory.preserve.resource-policy.nri.io/pod: "true"    # leave the memory nodes alone
//	hide-hyperthreads.resource-policy.nri.io/pod: "true"  # one thread per core
//	memory-type.resource-policy.nri.io/container.<name>: pmem,dram  # instead of the type's memoryTypes:
//	                                     # DRAM, PMEM, HBM in any case; an invalid value is logged and ignored;
//	                                     # memory.preserve and pinMemory: false win
//
// DRA (publishDRADevices): one device per instance, "<type>-<n>", with
// attributes balloonType, instance, numaNodes and socket and the capacity
// cpu = maxCPUs. Allocating a claim binds its instance; a container whose
// CDI devices name "<driver>/claim=<uid>-<n>" (abi.CDIDeviceName) runs in it (the env
// DRA_BALLOON_<uid>=<device>, the uid as it is, only when the runtime
// reports no CDI devices).
//
// Every answer is a function of the configuration, the topology and the calls
// seen since Init: no clock, no randomness, and every map is sorted before it
// reaches an answer.
package balloons

import (
	"github.com/nriwasm/nriwasm/sdk/go/kit/containers"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// Name is the policy's name, the built-in module's and its DRA driver's.
const Name = "balloons"

// Policy is the balloons policy. Create it with New; it is not safe for
// concurrent use (the host serializes calls). A stopped or removed
// container leaves its balloon at once (forget).
type Policy struct {
	policy.Description
	containers.Forget
	st *state // nil before Init
}

// New returns a policy ready to register.
func New() *Policy {
	p := &Policy{Description: policy.Description{Name: Name, Version: "0.1.0",
		Summary: "runs containers in balloons: CPU sets per balloon type that inflate and deflate with their containers"}}
	p.Forget = p.forget
	return p
}

// Policy serves every call but the pod-sandbox events.
var _ policy.ResourcePolicy = (*Policy)(nil)
