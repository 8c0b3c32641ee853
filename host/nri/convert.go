package nri

import (
	"strings"

	"github.com/containerd/nri/pkg/api"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// podSandbox normalizes a pod: its resources in milli-CPU and bytes, its QoS
// class from its cgroup parent or, failing that, its resources.
func podSandbox(p *api.PodSandbox) *abi.PodSandbox {
	if p == nil {
		return nil
	}
	lin := p.GetLinux()
	res := lin.GetPodResources()
	if res == nil {
		res = lin.GetResources()
	}
	r := resources(res)
	return &abi.PodSandbox{
		Id: p.GetId(), Uid: p.GetUid(), Name: p.GetName(), Namespace: p.GetNamespace(),
		Labels: p.GetLabels(), Annotations: p.GetAnnotations(),
		QosClass:       qosClass(lin.GetCgroupParent(), r),
		RuntimeHandler: p.GetRuntimeHandler(),
		CgroupParent:   lin.GetCgroupParent(),
		Resources:      r,
	}
}

// qosClass derives a pod's QoS class from its cgroup parent, as kubelet names
// it with either cgroup driver ("/kubepods/burstable/pod…",
// "kubepods-besteffort-pod….slice", "kubepods-pod….slice" for Guaranteed),
// or else from its resources.
func qosClass(cgroupParent string, r *abi.Resources) abi.QOSClass {
	parent := strings.ToLower(cgroupParent)
	switch {
	case strings.Contains(parent, "besteffort"):
		return abi.QOSClass_QOS_CLASS_BEST_EFFORT
	case strings.Contains(parent, "burstable"):
		return abi.QOSClass_QOS_CLASS_BURSTABLE
	case strings.Contains(parent, "kubepods"):
		return abi.QOSClass_QOS_CLASS_GUARANTEED
	}
	return qosFromResources(r)
}

// qosFromResources: no limits and the minimal CPU shares (2, which kubelet
// gives a pod without requests) is BestEffort; CPU and memory limits with the
// CPU request equal to the limit is Guaranteed; anything else Burstable.
func qosFromResources(r *abi.Resources) abi.QOSClass {
	switch {
	case r == nil:
		return abi.QOSClass_QOS_CLASS_UNSPECIFIED
	case r.CpuLimitMilli == 0 && r.MemoryLimitBytes == 0 && r.CpuRequestMilli <= minSharesMilli:
		return abi.QOSClass_QOS_CLASS_BEST_EFFORT
	case r.CpuLimitMilli > 0 && r.MemoryLimitBytes > 0 && r.CpuRequestMilli == r.CpuLimitMilli:
		return abi.QOSClass_QOS_CLASS_GUARANTEED
	}
	return abi.QOSClass_QOS_CLASS_BURSTABLE
}

// minSharesMilli is kubelet's minimum of 2 CPU shares, in milli-CPU.
const minSharesMilli = 2

// resources normalizes Linux resources: CPU shares become a milli-CPU request
// (shares * 1000 / 1024, rounded), quota/period a milli-CPU limit (rounded),
// the memory reservation a request and the limit a limit.
func resources(r *api.LinuxResources) *abi.Resources {
	if r == nil {
		return nil
	}
	out := &abi.Resources{}
	if cpu := r.GetCpu(); cpu != nil {
		if s := cpu.GetShares().GetValue(); s > 0 {
			out.CpuRequestMilli = int64((s*1000 + 512) / 1024)
		}
		quota, period := cpu.GetQuota().GetValue(), cpu.GetPeriod().GetValue()
		if quota > 0 && period > 0 {
			out.CpuLimitMilli = int64((uint64(quota)*1000 + period/2) / period)
		}
		out.CpusetCpus, out.CpusetMems = cpu.GetCpus(), cpu.GetMems()
	}
	if mem := r.GetMemory(); mem != nil {
		out.MemoryLimitBytes = max(mem.GetLimit().GetValue(), 0)
		out.MemoryRequestBytes = max(mem.GetReservation().GetValue(), 0)
	}
	for _, h := range r.GetHugepageLimits() {
		if out.HugepageLimits == nil {
			out.HugepageLimits = map[string]int64{}
		}
		out.HugepageLimits[h.GetPageSize()] = int64(h.GetLimit())
	}
	return out
}

// container normalizes a container of pod (which may be nil if unknown).
func container(c *api.Container, pod *abi.PodSandbox) *abi.Container {
	out := &abi.Container{
		Id: c.GetId(), PodSandboxId: c.GetPodSandboxId(), Name: c.GetName(),
		State:  containerState(c.GetState()),
		Labels: c.GetLabels(), Annotations: c.GetAnnotations(),
		Resources: resources(c.GetLinux().GetResources()),
		QosClass:  pod.GetQosClass(), Namespace: pod.GetNamespace(),
		Pid: c.GetPid(),
	}
	for _, e := range c.GetEnv() {
		k, v, _ := strings.Cut(e, "=")
		out.Env = append(out.Env, &abi.KeyValue{Key: k, Value: v})
	}
	for _, d := range c.GetCDIDevices() {
		out.CdiDevices = append(out.CdiDevices, d.GetName())
	}
	return out
}

func containerState(s api.ContainerState) abi.ContainerState {
	switch s {
	case api.ContainerState_CONTAINER_CREATED:
		return abi.ContainerState_CONTAINER_STATE_CREATED
	case api.ContainerState_CONTAINER_RUNNING, api.ContainerState_CONTAINER_PAUSED:
		return abi.ContainerState_CONTAINER_STATE_RUNNING
	case api.ContainerState_CONTAINER_STOPPED:
		return abi.ContainerState_CONTAINER_STATE_STOPPED
	}
	return abi.ContainerState_CONTAINER_STATE_UNSPECIFIED
}

// synchronizeState normalizes what Synchronize reports.
func synchronizeState(pods []*api.PodSandbox, ctrs []*api.Container) ([]*abi.PodSandbox, []*abi.Container) {
	byID := make(map[string]*abi.PodSandbox, len(pods))
	out := make([]*abi.PodSandbox, 0, len(pods))
	for _, p := range pods {
		n := podSandbox(p)
		byID[n.Id] = n
		out = append(out, n)
	}
	cs := make([]*abi.Container, 0, len(ctrs))
	for _, c := range ctrs {
		cs = append(cs, container(c, byID[c.GetPodSandboxId()]))
	}
	return out, cs
}
