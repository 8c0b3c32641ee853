package scenario

import "github.com/nriwasm/nriwasm/host/cpumap"

// Report is what a simulation prints: the policy, the node, one entry per step
// and the final state. Everything in it is a function of the inputs; lists are
// in a fixed order and maps are printed sorted.
type Report struct {
	Description string        `json:"description,omitempty"`
	Policy      PolicyReport  `json:"policy"`
	Node        NodeReport    `json:"node"`
	Steps       []*StepReport `json:"steps"`
	Final       FinalReport   `json:"final"`
	// Maps are the node's CPUs and what holds them after each step, one
	// per step; YAMLWithMaps, MapText and HTML draw them.
	Maps []*cpumap.Map `json:"-"`
}

// PolicyReport is the policy's Info answer and what its first Init answered.
type PolicyReport struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	SDK      string `json:"sdk,omitempty"`
	WantsDRA bool   `json:"wantsDra"`
	// Warnings are what the policy logged at warning level during its first
	// Init: configuration fields it ignores, for one.
	Warnings []string `json:"warnings,omitempty"`
}

// NodeReport summarizes the topology the policy was given.
type NodeReport struct {
	Name string `json:"name"`
	// Machine names the machine when it is a built-in one (no sysfs tree).
	Machine   string `json:"machine,omitempty"`
	CPUs      string `json:"cpus"`
	NUMANodes string `json:"numaNodes"`
}

// StepReport is one step: the calls it made and what came of them.
type StepReport struct {
	Step   int      `json:"step"`
	Kind   Kind     `json:"kind"`
	Target string   `json:"target,omitempty"`
	Calls  []string `json:"calls"`
	// InitContainers are the init containers a pod step ran to completion,
	// each as it was placed while it ran.
	InitContainers []ContainerReport `json:"initContainers,omitempty"`
	// Containers are the containers the step created or updated, as they are after it.
	Containers []ContainerReport `json:"containers,omitempty"`
	// Updates are the ContainerUpdates the policy's answers carried and the host applied.
	Updates  []UpdateReport `json:"updates,omitempty"`
	Devices  any            `json:"published,omitempty"`
	Claim    *ClaimReport   `json:"claim,omitempty"`
	WantsDRA *bool          `json:"wantsDra,omitempty"`
	Errors   []ErrorReport  `json:"errors,omitempty"`
	// Warnings are what the policy logged at warning level during the step.
	Warnings []string `json:"warnings,omitempty"`
}

// ContainerReport is a container's assignment.
type ContainerReport struct {
	ID           string            `json:"id"`
	Pod          string            `json:"pod"`
	Name         string            `json:"name"`
	CPUs         string            `json:"cpus"`
	Mems         string            `json:"mems"`
	Env          []string          `json:"env,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	MemoryPolicy string            `json:"memoryPolicy,omitempty"`
	RDTClass     string            `json:"rdtClass,omitempty"`
	BlockIOClass string            `json:"blockioClass,omitempty"`
}

// UpdateReport is one applied ContainerUpdate and the call whose answer held it.
type UpdateReport struct {
	From         string `json:"from"`
	Container    string `json:"container"`
	CPUs         string `json:"cpus,omitempty"`
	Mems         string `json:"mems,omitempty"`
	RDTClass     string `json:"rdtClass,omitempty"`
	BlockIOClass string `json:"blockioClass,omitempty"`
}

// ClaimReport is a prepared claim: per allocation result, the CDI edits and status.
type ClaimReport struct {
	UID     string           `json:"uid"`
	Devices []PreparedReport `json:"devices"`
}

// PreparedReport is one PreparedDevice.
type PreparedReport struct {
	Request        string `json:"request"`
	Pool           string `json:"pool"`
	Device         string `json:"device"`
	ShareID        string `json:"shareID,omitempty"`
	ContainerEdits any    `json:"containerEdits,omitempty"`
	Status         any    `json:"status,omitempty"`
}

// ErrorReport is an error of one call: the policy's refusal ("policy"), a
// runtime failure such as a trap ("runtime"), or an answer the host refused
// because its shape is out of bounds ("invalid"). Nothing of it was applied.
type ErrorReport struct {
	Call    string `json:"call"`
	Kind    string `json:"kind"`
	Code    string `json:"code,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	Output  string `json:"output,omitempty"`
}

// FinalReport is the node after the last step.
type FinalReport struct {
	Containers []FinalContainer `json:"containers"`
	Claims     []string         `json:"claims,omitempty"`
}

// FinalContainer is a live container's cpuset.
type FinalContainer struct {
	ID   string `json:"id"`
	CPUs string `json:"cpus"`
	Mems string `json:"mems"`
}
