package policy

import abi "github.com/nriwasm/nriwasm/abi/v1"

// The handler interfaces: a policy implements those it needs. Each is one ABI
// call; its request and response messages are documented in abi/v1.

// Initializer receives the configuration, node, topology and restore state once
// per instance. Until it returns successfully every other call except Info fails
// with ERROR_CODE_FAILED_PRECONDITION.
type Initializer interface {
	Init(*abi.InitRequest) (*abi.InitResponse, error)
}

// Reconfigurer accepts a new configuration at runtime; an error keeps the old one.
// The error's code tells the host what to do next: ERROR_CODE_INVALID_ARGUMENT
// (the configuration is wrong, naming the field) is reported as invalid;
// ERROR_CODE_FAILED_PRECONDITION or ERROR_CODE_RESOURCE_EXHAUSTED (valid, but
// the running containers or claims keep it from applying in place) lets the
// host apply it by a swap: a new instance initialized with it and restored
// from the journal, within policy.swap.maxMoves. A policy without Reconfigure
// answers ERROR_CODE_UNIMPLEMENTED, which the host treats the same way.
type Reconfigurer interface {
	Reconfigure(*abi.ReconfigureRequest) (*abi.ReconfigureResponse, error)
}

// DeviceProvider lists the DRA devices the node offers.
type DeviceProvider interface {
	Devices(*abi.DevicesRequest) (*abi.DevicesResponse, error)
}

// Allocator prepares a claim: CDI edits and a status per allocated device.
type Allocator interface {
	Allocate(*abi.AllocateRequest) (*abi.AllocateResponse, error)
}

// Releaser unprepares a claim.
type Releaser interface {
	Release(*abi.ReleaseRequest) (*abi.ReleaseResponse, error)
}

// Synchronizer reconciles with everything the runtime runs.
type Synchronizer interface {
	Synchronize(*abi.SynchronizeRequest) (*abi.SynchronizeResponse, error)
}

// PodSandboxRunner sees new pods.
type PodSandboxRunner interface {
	RunPodSandbox(*abi.RunPodSandboxRequest) (*abi.RunPodSandboxResponse, error)
}

// ContainerCreator places a new container.
type ContainerCreator interface {
	CreateContainer(*abi.CreateContainerRequest) (*abi.CreateContainerResponse, error)
}

// EncodedContainerCreator is ContainerCreator for a policy that keeps what
// each container was created with: when a policy implements it, the
// dispatcher calls CreateContainerEncoded instead of CreateContainer, with
// encoded, the bytes r was decoded from. They are never changed or reused
// after the call (r's strings point into them), so the policy may keep them
// rather than encode r's pod and container again (sdk/go/RATIONALE.md,
// "Why may a policy keep a create's encoded request?").
type EncodedContainerCreator interface {
	CreateContainerEncoded(r *abi.CreateContainerRequest, encoded []byte) (*abi.CreateContainerResponse, error)
}

// ContainerUpdater reacts to a container's resource update.
type ContainerUpdater interface {
	UpdateContainer(*abi.UpdateContainerRequest) (*abi.UpdateContainerResponse, error)
}

// ContainerStopper reacts to a container stopping.
type ContainerStopper interface {
	StopContainer(*abi.StopContainerRequest) (*abi.StopContainerResponse, error)
}

// ContainerRemover forgets a container.
type ContainerRemover interface {
	RemoveContainer(*abi.RemoveContainerRequest) (*abi.RemoveContainerResponse, error)
}

// PodSandboxStopper reacts to a pod stopping.
type PodSandboxStopper interface {
	StopPodSandbox(*abi.StopPodSandboxRequest) (*abi.StopPodSandboxResponse, error)
}

// PodSandboxRemover forgets a pod.
type PodSandboxRemover interface {
	RemovePodSandbox(*abi.RemovePodSandboxRequest) (*abi.RemovePodSandboxResponse, error)
}

// StateDumper dumps the policy's state for debugging.
type StateDumper interface {
	DumpState(*abi.DumpStateRequest) (*abi.DumpStateResponse, error)
}

// PoolReporter lists the policy's pools of CPUs (ABI v1.2): the host exports
// them as nriwasm_pool_* metrics. A policy that implements it lists
// METHOD_POOLS in its capabilities, so only then does the host ask.
type PoolReporter interface {
	Pools(*abi.PoolsRequest) (*abi.PoolsResponse, error)
}

// ResourcePolicy is what a full node resource policy implements: the
// container lifecycle, DRA claims, pool statistics and state dumps. The
// pod-sandbox events stay optional (a placement policy rarely needs them).
// A policy asserts it at compile time, so a handler lost in a refactoring
// fails the build rather than quietly leaving the call unhandled:
//
//	var _ policy.ResourcePolicy = (*Policy)(nil)
type ResourcePolicy interface {
	Policy
	Initializer
	Reconfigurer
	Synchronizer
	ContainerCreator
	ContainerUpdater
	ContainerStopper
	ContainerRemover
	StateDumper
	PoolReporter
	DeviceProvider
	Allocator
	Releaser
}
