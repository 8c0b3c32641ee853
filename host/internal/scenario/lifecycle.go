package scenario

import (
	"context"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func podName(p *abi.PodSandbox) string { return p.Namespace + "/" + p.Name }

func containerName(p *abi.PodSandbox, c *abi.Container) string { return podName(p) + "/" + c.Name }

// runPod sends RunPodSandbox, then runs each init container to completion
// (CreateContainer, StopContainer, RemoveContainer: the policy frees what it
// held before the next starts, as the kubelet runs them one at a time), then
// sends CreateContainer for each container. A pod or container whose call
// failed, or whose answer the host refused, is not created.
func (r *Runner) runPod(ctx context.Context, spec *Pod) {
	sb := spec.Sandbox.CloneVT()
	r.step.Target = podName(sb)
	call := "RunPodSandbox " + podName(sb)
	resp, err := r.client.RunPodSandbox(ctx, &abi.RunPodSandboxRequest{Pod: sb})
	if !r.called(call, err) || !r.applyUpdates(call, resp.GetUpdates(), "") {
		return
	}
	pod := &livePod{sandbox: sb}
	r.node.pods = append(r.node.pods, pod)
	for _, c := range spec.InitContainers {
		if !r.createContainer(ctx, pod, c.CloneVT(), spec.Claims[c.Name]) {
			// The kubelet starts no further container of a pod whose
			// init container failed to start.
			return
		}
		id := pod.containers[len(pod.containers)-1]
		r.step.InitContainers = append(r.step.InitContainers, containerReport(sb, r.node.containers[id]))
		r.stopAndRemove(ctx, pod, id)
	}
	for _, c := range spec.Containers {
		r.createContainer(ctx, pod, c.CloneVT(), spec.Claims[c.Name])
	}
	for _, id := range pod.containers {
		r.step.Containers = append(r.step.Containers, containerReport(sb, r.node.containers[id]))
	}
}

// runContainer adds a container to a live pod.
func (r *Runner) runContainer(ctx context.Context, t Target, c *abi.Container, claims []string) {
	r.step.Target = t.String()
	pod := r.node.pod(t.Pod)
	if pod == nil {
		r.fail("CreateContainer "+t.String(), &skipped{what: "pod " + t.Pod})
		return
	}
	r.step.Target = containerName(pod.sandbox, c)
	if r.createContainer(ctx, pod, c.CloneVT(), claims) {
		r.step.Containers = append(r.step.Containers, containerReport(pod.sandbox, r.node.containers[c.Id]))
	}
}

// createContainer sends CreateContainer for c, a clone the node may keep,
// with the CDI devices of its claims; unless the call fails or its answer is
// refused, c runs in pod with the adjustment applied.
func (r *Runner) createContainer(ctx context.Context, pod *livePod, c *abi.Container, claims []string) bool {
	sb := pod.sandbox
	call := "CreateContainer " + containerName(sb, c)
	devices, err := r.claimDevices(claims)
	if err != nil {
		r.fail(call, err)
		return false
	}
	c.CdiDevices = append(c.CdiDevices, devices...)
	resp, err := r.client.CreateContainer(ctx, &abi.CreateContainerRequest{Pod: sb, Container: c})
	if !r.called(call, err) {
		return false
	}
	if err := r.limits.adjustment(resp.GetAdjustment()); err != nil {
		r.fail(call, err)
		return false
	}
	if !r.applyUpdates(call, resp.GetUpdates(), c.Id) {
		return false
	}
	applyAdjustment(c, resp.GetAdjustment())
	c.State = abi.ContainerState_CONTAINER_STATE_RUNNING
	r.node.containers[c.Id] = c
	pod.containers = append(pod.containers, c.Id)
	r.applyUpdates(call, resp.GetUpdates(), "")
	return true
}

// claimDevices are the CDI devices kubelet gives a container using the
// claims keys: the host's CDI name of each device the claim's Allocate
// answer prepared (abi.CDIDeviceName, as host/cdi writes them).
func (r *Runner) claimDevices(keys []string) ([]string, error) {
	var devices []string
	for _, key := range keys {
		i := r.node.claim(key)
		if i < 0 {
			return nil, &skipped{what: "claim " + key}
		}
		pc := r.node.claims[i]
		for n := range pc.Allocation.GetDevices() {
			devices = append(devices, abi.CDIDeviceName(r.driver, pc.Claim.Uid, n))
		}
	}
	return devices, nil
}

// runRemove stops and removes a container, or all of a pod's containers and
// then the pod. Removal goes ahead whatever the policy answers.
func (r *Runner) runRemove(ctx context.Context, t Target) {
	pod := r.node.pod(t.Pod)
	if pod == nil {
		r.step.Target = t.String()
		r.fail("remove "+t.String(), &skipped{what: "pod " + t.Pod})
		return
	}
	sb := pod.sandbox
	r.step.Target = podName(sb)
	ids := append([]string(nil), pod.containers...)
	if t.Container != "" {
		r.step.Target += "/" + t.Container
		id := containerID(t.Pod, t.Container)
		if r.node.containers[id] == nil {
			r.fail("remove "+r.step.Target, &skipped{what: "container " + r.step.Target})
			return
		}
		ids = []string{id}
	}
	for _, id := range ids {
		r.stopAndRemove(ctx, pod, id)
	}
	if t.Container != "" {
		return
	}
	call := "StopPodSandbox " + podName(sb)
	stop, err := r.client.StopPodSandbox(ctx, &abi.StopPodSandboxRequest{Pod: sb})
	if r.called(call, err) {
		r.applyUpdates(call, stop.GetUpdates(), "")
	}
	call = "RemovePodSandbox " + podName(sb)
	rm, err := r.client.RemovePodSandbox(ctx, &abi.RemovePodSandboxRequest{Pod: sb})
	r.node.removePod(t.Pod)
	if r.called(call, err) {
		r.applyUpdates(call, rm.GetUpdates(), "")
	}
}

// stopAndRemove sends StopContainer and RemoveContainer for a live container
// and forgets it, whatever the policy answers.
func (r *Runner) stopAndRemove(ctx context.Context, pod *livePod, id string) {
	sb, c := pod.sandbox, r.node.containers[id]
	call := "StopContainer " + containerName(sb, c)
	stop, err := r.client.StopContainer(ctx, &abi.StopContainerRequest{Pod: sb, Container: c.CloneVT()})
	if r.called(call, err) {
		r.applyUpdates(call, stop.GetUpdates(), "")
	}
	c.State = abi.ContainerState_CONTAINER_STATE_STOPPED
	call = "RemoveContainer " + containerName(sb, c)
	rm, err := r.client.RemoveContainer(ctx, &abi.RemoveContainerRequest{Pod: sb, Container: c.CloneVT()})
	r.node.removeContainer(pod, id)
	if r.called(call, err) {
		r.applyUpdates(call, rm.GetUpdates(), "")
	}
}

// runUpdate sends a container's new resources; unless the policy refuses, the
// container takes them, and the answer's updates (its own included) apply.
func (r *Runner) runUpdate(ctx context.Context, t Target, res *abi.Resources) {
	pod := r.node.pod(t.Pod)
	id := containerID(t.Pod, t.Container)
	c := r.node.containers[id]
	r.step.Target = t.String()
	if pod == nil || c == nil {
		r.fail("update "+t.String(), &skipped{what: "container " + t.String()})
		return
	}
	sb := pod.sandbox
	r.step.Target = containerName(sb, c)
	next := res.CloneVT()
	next.CpusetCpus, next.CpusetMems, next.HugepageLimits = c.Resources.CpusetCpus, c.Resources.CpusetMems, c.Resources.HugepageLimits
	call := "UpdateContainer " + containerName(sb, c)
	resp, err := r.client.UpdateContainer(ctx, &abi.UpdateContainerRequest{Pod: sb, Container: c.CloneVT(), Resources: next})
	if r.called(call, err) && r.applyUpdates(call, resp.GetUpdates(), "") {
		cpus, mems := c.Resources.CpusetCpus, c.Resources.CpusetMems
		c.Resources = next
		c.Resources.CpusetCpus, c.Resources.CpusetMems = cpus, mems
	}
	r.step.Containers = append(r.step.Containers, containerReport(sb, c))
}

// applyUpdates checks an answer's ContainerUpdates, groups as the agent does,
// and, if all are in bounds, applies and reports them, one per container. With pending set it only checks, counting pending
// as a live container (one the same answer creates). It tells whether the
// answer passed.
func (r *Runner) applyUpdates(call string, us []*abi.ContainerUpdate, pending string) bool {
	live := func(id string) bool { return id != "" && (id == pending || r.node.containers[id] != nil) }
	if err := r.limits.updates("updates", us, live); err != nil {
		r.fail(call, err)
		return false
	}
	if pending != "" {
		return true
	}
	for id, u := range abi.EachContainer(us) {
		applyUpdate(r.node.containers[id], u)
		r.step.Updates = append(r.step.Updates, UpdateReport{
			From: call, Container: id, CPUs: u.CpusetCpus, Mems: u.CpusetMems,
			RDTClass: u.RdtClass, BlockIOClass: u.BlockioClass,
		})
	}
	return true
}
