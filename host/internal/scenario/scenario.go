// Package scenario simulates a node for a resource policy: it reads a scenario
// file (pods created and removed, containers updated, DRA claims allocated and
// released, configuration changes), drives a policy through the ABI the way the
// agent will, keeps the node's state from the policy's answers, and reports every
// decision in a deterministic form. docs/simulate.md describes the file format
// and the report; `nriwasm simulate` is its command line.
package scenario

import (
	_ "embed"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Example is the bundled example scenario, run when none is given.
//
//go:embed example.yaml
var Example []byte

// NodeName is the node name the simulation gives the policy (InitRequest.node_name)
// and the default pool of claim results.
const NodeName = "simulated-node"

// Kind is what a step does.
type Kind string

// The kinds of steps.
const (
	KindPod         Kind = "pod"
	KindRemove      Kind = "remove"
	KindUpdate      Kind = "update"
	KindClaim       Kind = "claim"
	KindRelease     Kind = "release"
	KindReconfigure Kind = "reconfigure"
	KindDevices     Kind = "devices"
	KindContainer   Kind = "container"
	KindRestart     Kind = "restart"
)

// kinds lists the kinds in the order error messages name them.
var kinds = []Kind{KindPod, KindContainer, KindRemove, KindUpdate, KindClaim, KindRelease, KindReconfigure, KindDevices, KindRestart}

// Scenario is a parsed, checked scenario: its steps hold the ABI messages the
// host side sends.
type Scenario struct {
	Description string
	Steps       []Step
}

// Step is one step; the fields its Kind names are set.
type Step struct {
	Index int
	Kind  Kind
	// Pod is the pod a KindPod step creates.
	Pod *Pod
	// Container is the container a KindContainer step adds to the live pod
	// Target.Pod, and Claims the claims it uses ("namespace/name").
	Container *abi.Container
	Claims    []string
	// Target is the pod or container a KindRemove or KindUpdate step acts on.
	Target Target
	// Resources are the new resources of a KindUpdate step (no cpuset).
	Resources *abi.Resources
	// Claim is the claim a KindClaim step allocates.
	Claim *abi.Claim
	// ClaimKey is the "namespace/name" of the claim a KindRelease step releases.
	ClaimKey string
	// Config is the configuration a KindReconfigure step sends.
	Config []byte
	// Exited are, for a KindRestart step, live containers created again
	// after an earlier container of the same name in their pod was removed:
	// the runtime's Synchronize lists that earlier one too, exited, next to
	// its successor (a runtime restart that killed and recreated them).
	Exited []Target
}

// Pod is a pod sandbox, its init containers (each created, run to
// completion and removed before the next) and its containers, in creation
// order.
type Pod struct {
	Sandbox        *abi.PodSandbox
	InitContainers []*abi.Container
	Containers     []*abi.Container
	// Claims are, by container name, the claims ("namespace/name") whose
	// prepared devices the container gets.
	Claims map[string][]string
}

// Target names a pod, or one of its containers when Container is set.
type Target struct {
	Pod       string
	Container string
}

func (t Target) String() string {
	if t.Container == "" {
		return t.Pod
	}
	return t.Pod + "/" + t.Container
}
