package state

import (
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func pod(i int) *abi.PodSandbox {
	return &abi.PodSandbox{
		Id: fmt.Sprintf("pod-%04d", i), Uid: fmt.Sprintf("uid-%04d", i),
		Name: fmt.Sprintf("web-%d", i), Namespace: "default",
		Labels:      map[string]string{"app": "web", "tier": "frontend", "zone": "a"},
		Annotations: map[string]string{"a.example.com/x": "1", "b.example.com/y": "2"},
		QosClass:    abi.QOSClass_QOS_CLASS_GUARANTEED,
	}
}

func container(i int) *abi.Container {
	return &abi.Container{
		Id: fmt.Sprintf("ctr-%04d", i), PodSandboxId: fmt.Sprintf("pod-%04d", i/20),
		Name: "app", State: abi.ContainerState_CONTAINER_STATE_RUNNING,
		Labels:      map[string]string{"io.kubernetes.container.name": "app", "io.kubernetes.pod.namespace": "default"},
		Annotations: map[string]string{"io.kubernetes.container.hash": "abc", "io.kubernetes.container.restartCount": "0"},
		Env:         []*abi.KeyValue{{Key: "PATH", Value: "/usr/bin"}, {Key: "HOME", Value: "/root"}},
		Resources: &abi.Resources{
			CpuRequestMilli: 2000, CpuLimitMilli: 2000,
			MemoryRequestBytes: 1 << 30, MemoryLimitBytes: 1 << 30,
			CpusetCpus: "0-255", CpusetMems: "0-7",
		},
		QosClass: abi.QOSClass_QOS_CLASS_GUARANTEED, Namespace: "default", Pid: uint32(1000 + i),
	}
}

func adjustment(i int) *abi.ContainerAdjustment {
	return &abi.ContainerAdjustment{
		CpusetCpus: fmt.Sprintf("%d-%d", 2*i%256, 2*i%256+1), CpusetMems: "0",
		Env:         []*abi.KeyValue{{Key: "NRIWASM_CPUS", Value: fmt.Sprint(2 * i % 256)}},
		Annotations: map[string]string{"nriwasm.io/pool": "shared", "nriwasm.io/zone": "numa0"},
	}
}

func claim(i int) *abi.PreparedClaim {
	return &abi.PreparedClaim{
		Claim: &abi.Claim{
			Uid: fmt.Sprintf("claim-%04d", i), Namespace: "default", Name: fmt.Sprintf("cpus-%d", i),
			Results: []*abi.DeviceAllocation{{Request: "cpus", Pool: "node-1", Device: fmt.Sprintf("cpu-%d", i)}},
			Config:  []*abi.DeviceConfig{{Source: abi.DeviceConfigSource_DEVICE_CONFIG_SOURCE_CLASS, Parameters: []byte(`{"exclusive":true}`)}},
		},
		Allocation: &abi.AllocateResponse{Devices: []*abi.PreparedDevice{{
			Request: "cpus", Pool: "node-1", Device: fmt.Sprintf("cpu-%d", i),
			ContainerEdits: &abi.CDIContainerEdits{Env: []string{fmt.Sprintf("CPUS=%d", i)}},
			Status: &abi.DeviceStatus{
				Conditions: []*abi.Condition{{Type: "Ready", Status: "True", Reason: "Prepared"}},
				Data:       []byte(`{"cpus":"4-7"}`),
			},
		}}},
	}
}

// journal builds a journal of pods, containers (with adjustments) and claims.
func journal(pods, containers, claims int) *Journal {
	j := New()
	for i := range pods {
		j.AddPod(pod(i))
	}
	for i := range containers {
		j.AddContainer(container(i), adjustment(i))
	}
	for i := range claims {
		j.AddClaim(claim(i))
	}
	return j
}
