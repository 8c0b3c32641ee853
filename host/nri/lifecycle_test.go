package nri_test

import (
	"context"

	"github.com/containerd/nri/pkg/api"
)

// runPod starts a pod.
func (rt *fakeRuntime) runPod(pod *api.PodSandbox) error {
	r := rt.adaptation()
	b := r.BlockPluginSync()
	defer b.Unblock()
	if err := r.RunPodSandbox(context.Background(), &api.RunPodSandboxRequest{Pod: pod}); err != nil {
		return err
	}
	rt.mu.Lock()
	rt.pods[pod.Id] = pod
	rt.mu.Unlock()
	return nil
}

// create creates and starts a container: the adjustment's cpuset and the
// updates of others apply, as the runtime would apply them.
func (rt *fakeRuntime) create(pod *api.PodSandbox, c *api.Container) (*api.CreateContainerResponse, error) {
	r := rt.adaptation()
	b := r.BlockPluginSync()
	defer b.Unblock()
	c.PodSandboxId = pod.Id
	resp, err := r.CreateContainer(context.Background(), &api.CreateContainerRequest{Pod: pod, Container: c})
	if err != nil {
		return nil, err
	}
	cpu := resp.GetAdjust().GetLinux().GetResources().GetCpu()
	setCPUs(c, cpu.GetCpus(), cpu.GetMems())
	c.State = api.ContainerState_CONTAINER_RUNNING
	rt.mu.Lock()
	rt.ctrs[c.Id] = c
	rt.mu.Unlock()
	rt.apply(resp.GetUpdate())
	return resp, nil
}

// updateContainer asks for new resources.
func (rt *fakeRuntime) updateContainer(id string, res *api.LinuxResources) (*api.UpdateContainerResponse, error) {
	r := rt.adaptation()
	b := r.BlockPluginSync()
	defer b.Unblock()
	rt.mu.Lock()
	c := rt.ctrs[id]
	pod := rt.pods[c.GetPodSandboxId()]
	rt.mu.Unlock()
	resp, err := r.UpdateContainer(context.Background(), &api.UpdateContainerRequest{Pod: pod, Container: c, LinuxResources: res})
	if err == nil {
		rt.apply(resp.GetUpdate())
	}
	return resp, err
}

// stopContainer stops a container; its answer's updates apply.
func (rt *fakeRuntime) stopContainer(id string) (*api.StopContainerResponse, error) {
	r := rt.adaptation()
	b := r.BlockPluginSync()
	defer b.Unblock()
	rt.mu.Lock()
	c := rt.ctrs[id]
	c.State = api.ContainerState_CONTAINER_STOPPED
	pod := rt.pods[c.GetPodSandboxId()]
	rt.mu.Unlock()
	resp, err := r.StopContainer(context.Background(), &api.StopContainerRequest{Pod: pod, Container: c})
	if err == nil {
		rt.apply(resp.GetUpdate())
	}
	return resp, err
}

// removeContainer removes a container.
func (rt *fakeRuntime) removeContainer(id string) error {
	r := rt.adaptation()
	b := r.BlockPluginSync()
	defer b.Unblock()
	rt.mu.Lock()
	c := rt.ctrs[id]
	delete(rt.ctrs, id)
	pod := rt.pods[c.GetPodSandboxId()]
	rt.mu.Unlock()
	return r.RemoveContainer(context.Background(), &api.RemoveContainerRequest{Pod: pod, Container: c})
}

// removePod stops and removes a pod (its containers must be gone).
func (rt *fakeRuntime) removePod(id string) error {
	r := rt.adaptation()
	b := r.BlockPluginSync()
	defer b.Unblock()
	rt.mu.Lock()
	pod := rt.pods[id]
	delete(rt.pods, id)
	rt.mu.Unlock()
	if err := r.StopPodSandbox(context.Background(), &api.StopPodSandboxRequest{Pod: pod}); err != nil {
		return err
	}
	return r.RemovePodSandbox(context.Background(), &api.RemovePodSandboxRequest{Pod: pod})
}
