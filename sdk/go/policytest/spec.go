package policytest

import (
	"maps"
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Spec describes a test container and its pod. Build one with Container
// and the methods, each of which returns a changed copy.
type Spec struct {
	ID string
	// Pod is the pod's id and name; "" means "pod-<ID>", a pod of its own.
	Pod string
	// Name is the container's name; "" means "c".
	Name      string
	Namespace string
	QOS       abi.QOSClass
	// Milli and Limit are the CPU request and limit in milli-CPU (0: none).
	Milli, Limit int64
	// MemRequest and MemLimit are the memory request and limit in bytes
	// (0: none).
	MemRequest, MemLimit int64
	// Annotations and Labels are the pod's.
	Annotations, Labels map[string]string
	CDI                 []string
	Env                 []*abi.KeyValue
	// Mounts and Devices are the container's, with the hints the host
	// resolved for them.
	Mounts  []*abi.Mount
	Devices []*abi.LinuxDevice
}

// Container is a Burstable container requesting milli CPU in namespace
// "default".
func Container(id string, milli int64) Spec {
	return Spec{ID: id, Namespace: "default", QOS: abi.QOSClass_QOS_CLASS_BURSTABLE, Milli: milli}
}

// Guaranteed sets the QoS class to Guaranteed.
func (s Spec) Guaranteed() Spec { s.QOS = abi.QOSClass_QOS_CLASS_GUARANTEED; return s }

// BestEffort sets the QoS class to BestEffort and drops the request.
func (s Spec) BestEffort() Spec { s.QOS, s.Milli = abi.QOSClass_QOS_CLASS_BEST_EFFORT, 0; return s }

// In sets the namespace.
func (s Spec) In(ns string) Spec { s.Namespace = ns; return s }

// OfPod puts the container in pod (id and name).
func (s Spec) OfPod(pod string) Spec { s.Pod = pod; return s }

// Named sets the container's name.
func (s Spec) Named(name string) Spec { s.Name = name; return s }

// Limited sets the CPU limit, milli-CPU.
func (s Spec) Limited(milli int64) Spec { s.Limit = milli; return s }

// Memory sets the memory request and limit in bytes (0: none).
func (s Spec) Memory(request, limit int64) Spec { s.MemRequest, s.MemLimit = request, limit; return s }

// With adds a pod annotation.
func (s Spec) With(k, v string) Spec { s.Annotations = withEntry(s.Annotations, k, v); return s }

// Label adds a pod label.
func (s Spec) Label(k, v string) Spec { s.Labels = withEntry(s.Labels, k, v); return s }

// withEntry is a copy of m with k set to v: specs share nothing.
func withEntry(m map[string]string, k, v string) map[string]string {
	m = maps.Clone(m)
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// WithCDI sets the CDI devices the runtime reports.
func (s Spec) WithCDI(devices ...string) Spec { s.CDI = devices; return s }

// WithMount adds a mount of source at destination with the given options and
// the hints the host resolved for it.
func (s Spec) WithMount(source, destination string, options []string, hints ...*abi.TopologyHint) Spec {
	s.Mounts = append(slices.Clone(s.Mounts), &abi.Mount{Source: source, Destination: destination, Type: "bind", Options: options, Hints: hints})
	return s
}

// WithDevice adds a block device node at path, writable unless readOnly,
// and the hints the host resolved for it.
func (s Spec) WithDevice(path string, readOnly bool, hints ...*abi.TopologyHint) Spec {
	d := &abi.LinuxDevice{Path: path, Type: "b", Major: 259, Minor: int64(len(s.Devices)), ReadOnly: readOnly, Hints: hints}
	s.Devices = append(slices.Clone(s.Devices), d)
	return s
}

// Request is the CreateContainer request the host would send: the
// container just created, in its pod.
func (s Spec) Request() *abi.CreateContainerRequest {
	pod, name := s.Pod, s.Name
	if pod == "" {
		pod = "pod-" + s.ID
	}
	if name == "" {
		name = "c"
	}
	p := &abi.PodSandbox{Id: pod, Uid: "uid-" + pod, Name: pod, Namespace: s.Namespace, QosClass: s.QOS, Annotations: s.Annotations, Labels: s.Labels}
	c := &abi.Container{Id: s.ID, PodSandboxId: pod, Name: name, Namespace: s.Namespace, QosClass: s.QOS,
		State:     abi.ContainerState_CONTAINER_STATE_CREATED,
		Resources: &abi.Resources{CpuRequestMilli: s.Milli, CpuLimitMilli: s.Limit, MemoryRequestBytes: s.MemRequest, MemoryLimitBytes: s.MemLimit}, CdiDevices: s.CDI, Env: s.Env,
		Mounts: s.Mounts, Devices: s.Devices}
	return &abi.CreateContainerRequest{Pod: p, Container: c}
}

// Holding adds, for each claim uid, the CDI device the host names for the
// claim's first device of driver (abi.CDIDeviceName): the container holds
// those claims.
func (s Spec) Holding(driver string, uids ...string) Spec {
	s.CDI = slices.Clone(s.CDI)
	for _, uid := range uids {
		s.CDI = append(s.CDI, abi.CDIDeviceName(driver, uid, 0))
	}
	return s
}
