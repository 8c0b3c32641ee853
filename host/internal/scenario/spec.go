package scenario

import (
	"encoding/json"
	"fmt"
)

// The scenario file's shape (docs/simulate.md). Field names follow Kubernetes'
// spelling; Parse rejects any other field.

type fileSpec struct {
	Description string            `json:"description"`
	Steps       []json.RawMessage `json:"steps"`
}

type podSpec struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	UID         string            `json:"uid"`
	QOSClass    string            `json:"qosClass"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	// InitContainers run one after another, each to completion, before Containers.
	InitContainers []containerSpec `json:"initContainers"`
	Containers     []containerSpec `json:"containers"`
}

type containerSpec struct {
	Name        string            `json:"name"`
	Resources   resourcesSpec     `json:"resources"`
	Env         []envSpec         `json:"env"`
	Annotations map[string]string `json:"annotations"`
	CDIDevices  []string          `json:"cdiDevices"`
	// Claims name live claims ("name" in the pod's namespace, or
	// "namespace/name") whose prepared devices the container gets, as kubelet
	// adds a claim's CDI devices.
	Claims []string `json:"claims"`
	// Mounts and Devices are the container's, each with the topology hints
	// the host would resolve for it from sysfs.
	Mounts  []mountSpec  `json:"mounts"`
	Devices []deviceSpec `json:"devices"`
}

type mountSpec struct {
	Source      string     `json:"source"`
	Destination string     `json:"destination"`
	Type        string     `json:"type"`
	Options     []string   `json:"options"`
	Hints       []hintSpec `json:"hints"`
}

type deviceSpec struct {
	Path     string     `json:"path"`
	Type     string     `json:"type"`
	Major    int64      `json:"major"`
	Minor    int64      `json:"minor"`
	ReadOnly bool       `json:"readOnly"`
	Hints    []hintSpec `json:"hints"`
}

// hintSpec is a topology hint: lists in Linux list form.
type hintSpec struct {
	Provider string `json:"provider"`
	CPUs     string `json:"cpus"`
	NUMAs    string `json:"numas"`
	Sockets  string `json:"sockets"`
}

// newContainerSpec is a container step: a container added to a live pod.
type newContainerSpec struct {
	Pod string `json:"pod"`
	containerSpec
}

type envSpec struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type resourcesSpec struct {
	Requests quantities `json:"requests"`
	Limits   quantities `json:"limits"`
}

type quantities struct {
	CPU    *Quantity `json:"cpu"`
	Memory *Quantity `json:"memory"`
}

type updateSpec struct {
	Container string        `json:"container"`
	Resources resourcesSpec `json:"resources"`
}

type claimSpec struct {
	UID       string       `json:"uid"`
	Namespace string       `json:"namespace"`
	Name      string       `json:"name"`
	Results   []resultSpec `json:"results"`
	Config    []configSpec `json:"config"`
}

type resultSpec struct {
	Request          string              `json:"request"`
	Pool             string              `json:"pool"`
	Device           string              `json:"device"`
	ConsumedCapacity map[string]Quantity `json:"consumedCapacity"`
	ShareID          string              `json:"shareID"`
	AdminAccess      bool                `json:"adminAccess"`
}

type configSpec struct {
	Requests   []string        `json:"requests"`
	Source     string          `json:"source"`
	Parameters json.RawMessage `json:"parameters"`
}

// Quantity is a Kubernetes quantity as written ("500m", "2", "1Gi"); a YAML
// number is taken as its decimal form.
type Quantity string

// UnmarshalJSON accepts a JSON string or number.
func (q *Quantity) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*q = Quantity(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("want a quantity (a string or a number), got %s", data)
	}
	*q = Quantity(n.String())
	return nil
}
