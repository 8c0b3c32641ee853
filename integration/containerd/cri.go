//go:build integration

package containerd

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PodOptions describe a pod sandbox. Pods always use the host network and
// set no hostname (the VM's network namespace is not the pod's to rename).
type PodOptions struct {
	Name      string // default pod-<n>
	Namespace string // default "default"
	UID       string // default a random UUID
	// QOS picks the default CgroupParent; default Burstable.
	QOS QOSClass
	// CgroupParent defaults to kubelet's cgroupfs layout for QOS under the
	// test's own cgroup: <CgroupRoot>/kubepods/pod<UID> (Guaranteed),
	// …/kubepods/burstable/pod<UID>, …/kubepods/besteffort/pod<UID>. The
	// agent derives a pod's QoS class from it, as from kubelet's.
	CgroupParent string
	Labels       map[string]string
	Annotations  map[string]string
}

// QOSClass is a pod's Kubernetes QoS class, as kubelet encodes it in the
// pod's cgroup parent.
type QOSClass string

// The QoS classes; the zero value means Burstable.
const (
	Guaranteed QOSClass = "Guaranteed"
	Burstable  QOSClass = "Burstable"
	BestEffort QOSClass = "BestEffort"
)

// cgroupParent returns kubelet's cgroupfs parent for a pod of class q.
func (c *Containerd) cgroupParent(q QOSClass, uid string) (string, error) {
	switch q {
	case Guaranteed:
		return c.CgroupRoot + "/kubepods/pod" + uid, nil
	case Burstable, "":
		return c.CgroupRoot + "/kubepods/burstable/pod" + uid, nil
	case BestEffort:
		return c.CgroupRoot + "/kubepods/besteffort/pod" + uid, nil
	}
	return "", fmt.Errorf("unknown QoS class %q", q)
}

// Pod is a running pod sandbox.
type Pod struct {
	ID     string
	Config *runtimeapi.PodSandboxConfig
}

// ContainerOptions describe a busybox container.
type ContainerOptions struct {
	Name    string   // default "c"
	Command []string // default /bin/sleep 3600
	// CPU resources as kubelet would set them; zero values are not set.
	// CPUPeriod defaults to 100000 when CPUQuota is set.
	CPUShares, CPUQuota, CPUPeriod int64
	CpusetCPUs, CpusetMems         string
	Labels                         map[string]string
	Annotations                    map[string]string
	// CDIDevices are fully qualified CDI device names, as kubelet passes a
	// prepared claim's devices.
	CDIDevices []string
}

// RunPodSandbox runs a host-network pod sandbox (the pause container is the
// busybox image).
func (c *Containerd) RunPodSandbox(ctx context.Context, o PodOptions) (*Pod, error) {
	if o.Name == "" {
		o.Name = fmt.Sprintf("pod-%d", c.pods.Add(1))
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.UID == "" {
		o.UID = newUID()
	}
	if o.CgroupParent == "" {
		var err error
		if o.CgroupParent, err = c.cgroupParent(o.QOS, o.UID); err != nil {
			return nil, fmt.Errorf("CRI RunPodSandbox %s/%s: %w", o.Namespace, o.Name, err)
		}
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: o.Name, Namespace: o.Namespace, Uid: o.UID},
		LogDirectory: c.path("pods", o.UID),
		Labels:       o.Labels,
		Annotations:  o.Annotations,
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: o.CgroupParent,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{
					Network: runtimeapi.NamespaceMode_NODE,
					Pid:     runtimeapi.NamespaceMode_CONTAINER,
					Ipc:     runtimeapi.NamespaceMode_POD,
				},
			},
		},
	}
	resp, err := c.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		return nil, fmt.Errorf("CRI RunPodSandbox %s/%s: %w", o.Namespace, o.Name, err)
	}
	return &Pod{ID: resp.PodSandboxId, Config: cfg}, nil
}

// StopPodSandbox stops the pod's containers and its sandbox.
func (c *Containerd) StopPodSandbox(ctx context.Context, podID string) error {
	if _, err := c.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: podID}); err != nil {
		return fmt.Errorf("CRI StopPodSandbox %s: %w", podID, err)
	}
	return nil
}

// RemovePodSandbox removes a pod and its containers.
func (c *Containerd) RemovePodSandbox(ctx context.Context, podID string) error {
	if _, err := c.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: podID}); err != nil {
		return fmt.Errorf("CRI RemovePodSandbox %s: %w", podID, err)
	}
	return nil
}

// CreateContainer creates a busybox container in pod; NRI plugins see its
// CreateContainer event here.
func (c *Containerd) CreateContainer(ctx context.Context, pod *Pod, o ContainerOptions) (string, error) {
	if o.Name == "" {
		o.Name = "c"
	}
	if o.Command == nil {
		o.Command = []string{"/bin/sleep", "3600"}
	}
	if o.CPUQuota != 0 && o.CPUPeriod == 0 {
		o.CPUPeriod = 100000
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: o.Name},
		Image:       &runtimeapi.ImageSpec{Image: ImageRef},
		Command:     o.Command,
		LogPath:     o.Name + ".log",
		Labels:      o.Labels,
		Annotations: o.Annotations,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources: &runtimeapi.LinuxContainerResources{
				CpuShares:  o.CPUShares,
				CpuQuota:   o.CPUQuota,
				CpuPeriod:  o.CPUPeriod,
				CpusetCpus: o.CpusetCPUs,
				CpusetMems: o.CpusetMems,
			},
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
				NamespaceOptions: pod.Config.GetLinux().GetSecurityContext().GetNamespaceOptions(),
			},
		},
	}
	for _, d := range o.CDIDevices {
		cfg.CDIDevices = append(cfg.CDIDevices, &runtimeapi.CDIDevice{Name: d})
	}
	resp, err := c.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId:  pod.ID,
		Config:        cfg,
		SandboxConfig: pod.Config,
	})
	if err != nil {
		return "", fmt.Errorf("CRI CreateContainer %s in pod %s: %w", o.Name, pod.ID, err)
	}
	return resp.ContainerId, nil
}

// StartContainer starts a created container.
func (c *Containerd) StartContainer(ctx context.Context, id string) error {
	if _, err := c.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		return fmt.Errorf("CRI StartContainer %s: %w", id, err)
	}
	return nil
}

// RunContainer creates and starts a container.
func (c *Containerd) RunContainer(ctx context.Context, pod *Pod, o ContainerOptions) (string, error) {
	id, err := c.CreateContainer(ctx, pod, o)
	if err != nil {
		return "", err
	}
	return id, c.StartContainer(ctx, id)
}

// StopContainer stops a container; timeout 0 kills it at once (busybox's
// sleep as PID 1 ignores SIGTERM).
func (c *Containerd) StopContainer(ctx context.Context, id string, timeoutSeconds int64) error {
	if _, err := c.rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: timeoutSeconds}); err != nil {
		return fmt.Errorf("CRI StopContainer %s: %w", id, err)
	}
	return nil
}

// RemoveContainer removes a container.
func (c *Containerd) RemoveContainer(ctx context.Context, id string) error {
	if _, err := c.rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		return fmt.Errorf("CRI RemoveContainer %s: %w", id, err)
	}
	return nil
}

// PID returns the host PID of the container's init process.
func (c *Containerd) PID(ctx context.Context, id string) (int, error) {
	info, err := c.containerInfo(ctx, id)
	if err != nil {
		return 0, err
	}
	if info.PID <= 0 {
		return 0, fmt.Errorf("container %s has no process (pid %d)", id, info.PID)
	}
	return info.PID, nil
}

// containerInfo is the part of CRI's verbose container status it uses.
type containerInfo struct {
	PID         int `json:"pid"`
	RuntimeSpec struct {
		Linux struct {
			CgroupsPath string `json:"cgroupsPath"`
			Resources   struct {
				CPU struct {
					Cpus string `json:"cpus"`
					Mems string `json:"mems"`
				} `json:"cpu"`
			} `json:"resources"`
		} `json:"linux"`
	} `json:"runtimeSpec"`
}

func (c *Containerd) containerInfo(ctx context.Context, id string) (*containerInfo, error) {
	st, err := c.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		return nil, fmt.Errorf("CRI ContainerStatus %s: %w", id, err)
	}
	raw, ok := st.GetInfo()["info"]
	if !ok {
		return nil, fmt.Errorf("CRI ContainerStatus %s: no verbose info", id)
	}
	var info containerInfo
	if err := json.Unmarshal([]byte(raw), &info); err != nil {
		return nil, fmt.Errorf("decoding the verbose status of container %s: %w", id, err)
	}
	return &info, nil
}

func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
