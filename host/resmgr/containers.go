package resmgr

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
)

// podLog and ctrLog tag log lines with the pod and container they concern.
func (m *Manager) podLog(pod *abi.PodSandbox) logr.Logger {
	return m.log.WithValues("pod", pod.GetNamespace()+"/"+pod.GetName())
}

func (m *Manager) ctrLog(pod *abi.PodSandbox, c *abi.Container) logr.Logger {
	return m.podLog(pod).WithValues("container", c.GetName(), "containerID", c.GetId())
}

// Synchronize reconciles the journal with what the runtime runs (the runtime
// says what exists, the journal what was assigned), hands the result to the
// policy and returns the policy's validated updates. A policy failure is
// logged and answers no updates: the runtime's containers run on as they are.
func (m *Manager) Synchronize(ctx context.Context, pods []*abi.PodSandbox, containers []*abi.Container) ([]*abi.ContainerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	defer m.synced.Store(true)
	forgotten, annotated := m.journal.Reconcile(pods, containers)
	m.preexisting = make(map[string]bool, len(pods))
	for _, p := range pods {
		m.preexisting[p.GetId()] = true
	}
	m.changed()
	for _, c := range forgotten {
		m.log.Info("forgetting a container the runtime no longer has", "containerID", c.GetId(), "container", c.GetName())
	}
	var resp *abi.SynchronizeResponse
	err := m.call(ctx, abi.Method_METHOD_SYNCHRONIZE, func(ctx context.Context) (err error) {
		resp, err = m.client.Synchronize(ctx, &abi.SynchronizeRequest{Pods: pods, Containers: annotated})
		return err
	})
	if err != nil {
		m.log.Error(err, "policy failed to synchronize; containers keep what they have", "pods", len(pods), "containers", len(containers))
		return nil, nil
	}
	updates, _ := m.acceptUpdates(abi.Method_METHOD_SYNCHRONIZE, resp.GetUpdates())
	if err := m.saveNow(); err != nil {
		m.log.Error(err, "synchronized journal not saved before the answer; the background saver retries")
	}
	m.log.Info("synchronized", "pods", len(pods), "containers", len(containers), "forgotten", len(forgotten), "updates", abi.CountContainers(updates))
	return updates, nil
}

// RunPodSandbox journals a new pod and tells the policy.
func (m *Manager) RunPodSandbox(ctx context.Context, pod *abi.PodSandbox) ([]*abi.ContainerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.journal.AddPod(pod)
	delete(m.preexisting, pod.GetId())
	m.changed()
	var resp *abi.RunPodSandboxResponse
	err := m.call(ctx, abi.Method_METHOD_RUN_POD_SANDBOX, func(ctx context.Context) (err error) {
		resp, err = m.client.RunPodSandbox(ctx, &abi.RunPodSandboxRequest{Pod: pod})
		return err
	})
	return m.eventUpdates(abi.Method_METHOD_RUN_POD_SANDBOX, m.podLog(pod), resp, err)
}

// CreateContainer asks the policy for the container's adjustment and the
// updates of other containers, checks both, and journals what is applied.
//
// When the policy fails (a refusal, a runtime failure after the retry, or an
// answer the checks refuse), nri.onPolicyFailure decides: fail-open starts the
// container without adjustment (logged as an error and counted), fail-closed
// returns the error and the runtime fails the creation.
func (m *Manager) CreateContainer(ctx context.Context, pod *abi.PodSandbox, c *abi.Container) (*abi.ContainerAdjustment, []*abi.ContainerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	log := m.ctrLog(pod, c)
	if !m.journal.HasPod(pod.GetId()) { // forgotten with its last container (forgetPreexisting)
		m.journal.AddPod(pod)
	}
	var resp *abi.CreateContainerResponse
	method := abi.Method_METHOD_CREATE_CONTAINER
	err := m.call(ctx, method, func(ctx context.Context) (err error) {
		resp, err = m.client.CreateContainer(ctx, &abi.CreateContainerRequest{Pod: pod, Container: c})
		return err
	})
	if err == nil {
		if err = m.limits.Adjustment(resp.GetAdjustment()); err == nil {
			err = m.limits.Updates("updates", resp.GetUpdates(), m.journal.HasContainer)
		}
		if err != nil {
			m.refused(method, err)
		}
	}
	if err != nil {
		if m.cfg.NRI.OnPolicyFailure == config.FailClosed {
			log.Error(err, "policy failed; creation refused (nri.onPolicyFailure: fail-closed)")
			return nil, nil, fmt.Errorf("nriwasm: policy %q: %w", m.cfg.Policy.Name, err)
		}
		log.Error(err, "POLICY FAILED: container starts unpinned, without the policy's adjustment (nri.onPolicyFailure: fail-open)")
		m.metrics.FailedOpen()
		m.journal.AddContainer(c, nil)
		m.changed()
		if err := m.saveNow(); err != nil {
			log.Error(err, "fail-open container not saved before the answer; the background saver retries")
		}
		return &abi.ContainerAdjustment{}, nil, nil
	}
	adj := resp.GetAdjustment()
	if adj == nil {
		adj = &abi.ContainerAdjustment{}
	}
	m.journal.AddContainer(c, adj)
	updates := resp.GetUpdates() // checked above, with the answer
	m.journalUpdates(updates)
	m.changed()
	// The placement is on disk before the runtime acts on it: a crash right
	// after the answer would otherwise place the container again, elsewhere,
	// at the next Synchronize (docs/agent.md has the cost).
	if err := m.saveNow(); err != nil {
		log.Error(err, "placement not saved before the answer; the background saver retries")
	}
	if log.V(1).Enabled() {
		log.V(1).Info("container created", "cpus", adj.GetCpusetCpus(), "mems", adj.GetCpusetMems(), "updates", abi.CountContainers(updates))
	}
	return adj, updates, nil
}

// eventUpdates handles the answer of a call whose failure does not stop the
// runtime's request: a failure is logged, updates are checked and applied.
func (m *Manager) eventUpdates(method abi.Method, log logr.Logger, resp interface{ GetUpdates() []*abi.ContainerUpdate }, err error) ([]*abi.ContainerUpdate, error) {
	if err != nil {
		log.Error(err, "policy call failed; the runtime's request goes on", "method", method.Short())
		return nil, nil
	}
	updates, _ := m.acceptUpdates(method, resp.GetUpdates())
	return updates, nil
}
