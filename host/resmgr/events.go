package resmgr

import (
	"context"
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// UpdateContainer tells the policy of a container's new resources. A policy's
// refusal fails the update (the runtime keeps the old resources); a runtime
// failure is logged and the update goes ahead. The answer's updates, this
// container's included, are checked and journaled.
func (m *Manager) UpdateContainer(ctx context.Context, pod *abi.PodSandbox, c *abi.Container, res *abi.Resources) ([]*abi.ContainerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var resp *abi.UpdateContainerResponse
	method := abi.Method_METHOD_UPDATE_CONTAINER
	err := m.call(ctx, method, func(ctx context.Context) (err error) {
		resp, err = m.client.UpdateContainer(ctx, &abi.UpdateContainerRequest{Pod: pod, Container: c, Resources: res})
		return err
	})
	if isPolicyError(err) {
		m.ctrLog(pod, c).Error(err, "policy refused the update")
		return nil, fmt.Errorf("nriwasm: policy %q: %w", m.cfg.Policy.Name, err)
	}
	if cur, ok := m.journal.Container(c.GetId()); ok && err == nil {
		cur.Resources = mergeResources(cur.GetResources(), res)
		m.journal.AddContainer(cur, cur.GetAssignment())
		m.changed()
	}
	return m.eventUpdates(method, m.ctrLog(pod, c), resp, err)
}

// mergeResources is res with the cpuset of cur (an update does not set those).
func mergeResources(cur, res *abi.Resources) *abi.Resources {
	next := res.CloneVT()
	if next == nil {
		next = &abi.Resources{}
	}
	next.CpusetCpus, next.CpusetMems = cur.GetCpusetCpus(), cur.GetCpusetMems()
	return next
}

// StopContainer forgets the container (Kubernetes never restarts a stopped
// container: it creates a new one) and tells the policy, whose updates give
// its resources to others.
func (m *Manager) StopContainer(ctx context.Context, pod *abi.PodSandbox, c *abi.Container) ([]*abi.ContainerUpdate, error) {
	return m.containerGone(ctx, abi.Method_METHOD_STOP_CONTAINER, pod, c)
}

// RemoveContainer forgets the container and tells the policy. Together with
// Synchronize it is what cleans up: runtimes may drop pod events.
func (m *Manager) RemoveContainer(ctx context.Context, pod *abi.PodSandbox, c *abi.Container) ([]*abi.ContainerUpdate, error) {
	return m.containerGone(ctx, abi.Method_METHOD_REMOVE_CONTAINER, pod, c)
}

func (m *Manager) containerGone(ctx context.Context, method abi.Method, pod *abi.PodSandbox, c *abi.Container) ([]*abi.ContainerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.journal.RemoveContainer(c.GetId()) {
		m.forgetPreexisting(pod.GetId())
		m.changed()
	}
	var resp interface{ GetUpdates() []*abi.ContainerUpdate }
	err := m.call(ctx, method, func(ctx context.Context) error {
		var err error
		if method == abi.Method_METHOD_STOP_CONTAINER {
			resp, err = m.client.StopContainer(ctx, &abi.StopContainerRequest{Pod: pod, Container: c})
		} else {
			resp, err = m.client.RemoveContainer(ctx, &abi.RemoveContainerRequest{Pod: pod, Container: c})
		}
		return err
	})
	return m.eventUpdates(method, m.ctrLog(pod, c), resp, err)
}

// StopPodSandbox tells the policy; the pod stays journaled until removed.
func (m *Manager) StopPodSandbox(ctx context.Context, pod *abi.PodSandbox) ([]*abi.ContainerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var resp *abi.StopPodSandboxResponse
	err := m.call(ctx, abi.Method_METHOD_STOP_POD_SANDBOX, func(ctx context.Context) (err error) {
		resp, err = m.client.StopPodSandbox(ctx, &abi.StopPodSandboxRequest{Pod: pod})
		return err
	})
	return m.eventUpdates(abi.Method_METHOD_STOP_POD_SANDBOX, m.podLog(pod), resp, err)
}

// RemovePodSandbox forgets the pod and tells the policy.
func (m *Manager) RemovePodSandbox(ctx context.Context, pod *abi.PodSandbox) ([]*abi.ContainerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.journal.RemovePod(pod.GetId()) {
		m.changed()
	}
	var resp *abi.RemovePodSandboxResponse
	err := m.call(ctx, abi.Method_METHOD_REMOVE_POD_SANDBOX, func(ctx context.Context) (err error) {
		resp, err = m.client.RemovePodSandbox(ctx, &abi.RemovePodSandboxRequest{Pod: pod})
		return err
	})
	return m.eventUpdates(abi.Method_METHOD_REMOVE_POD_SANDBOX, m.podLog(pod), resp, err)
}

// forgetPreexisting forgets a pod that predates the runtime's connection once
// its last container is gone: the runtime will not send its removal
// (containerd 2.4 after a restart), and until the next Synchronize it would
// count in nriwasm_managed_pods. A pod whose containers come back (kubelet
// restarting one) is journaled again by CreateContainer.
func (m *Manager) forgetPreexisting(podID string) {
	if !m.preexisting[podID] {
		return
	}
	for _, c := range m.journal.RestoreState().GetContainers() {
		if c.GetPodSandboxId() == podID {
			return
		}
	}
	delete(m.preexisting, podID)
	if m.journal.RemovePod(podID) {
		m.log.V(1).Info("forgetting a pod that predates the runtime's connection with its last container", "podID", podID)
	}
}
