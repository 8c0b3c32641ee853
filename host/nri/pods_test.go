package nri_test

import (
	"fmt"

	"github.com/containerd/nri/pkg/api"
)

// pod returns a pod of QoS class qos ("guaranteed", "burstable" or
// "besteffort"), with kubelet's systemd cgroup parent.
func pod(name, qos string) *api.PodSandbox {
	uid := "uid-" + name
	parent := "kubepods-" + qos + "-pod" + uid + ".slice"
	if qos == "guaranteed" {
		parent = "kubepods-pod" + uid + ".slice"
	}
	return &api.PodSandbox{
		Id: "sb-" + name, Uid: uid, Name: name, Namespace: "default",
		Linux: &api.LinuxPodSandbox{CgroupParent: parent},
	}
}

// ctr returns a container asking for milliCPU (request = limit when limited)
// and memory, as kubelet sets them: shares from the request, quota from the
// limit.
func ctr(pod *api.PodSandbox, name string, requestMilli, limitMilli int64, memory int64) *api.Container {
	res := &api.LinuxResources{Cpu: &api.LinuxCPU{Shares: api.UInt64(uint64(max(requestMilli*1024/1000, 2)))}}
	if limitMilli > 0 {
		res.Cpu.Quota = api.Int64(limitMilli * 100)
		res.Cpu.Period = api.UInt64(100000)
	}
	if memory > 0 {
		res.Memory = &api.LinuxMemory{Limit: api.Int64(memory)}
	}
	return &api.Container{
		Id: fmt.Sprintf("%s-%s", pod.Name, name), PodSandboxId: pod.Id, Name: name,
		State: api.ContainerState_CONTAINER_CREATED,
		Env:   []string{"PATH=/bin"},
		Linux: &api.LinuxContainer{Resources: res},
	}
}
