package scenario

import (
	"context"
	"errors"
	"fmt"
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/state"
)

// runRestart restarts the agent as host/resmgr starts: the journal goes
// through the checkpoint format (written and read back), is checked against
// the node's limits, and a new policy instance's Init restores it; then the
// runtime's Synchronize reports every pod and container with the cpusets it
// applied, and the journal's assignments are put back on them
// (state.Journal.Reconcile) before the policy sees them; each container of
// exited is preceded there by its removed predecessor, exited. The step
// reports every live container as it is afterwards.
func (r *Runner) runRestart(ctx context.Context, exited []Target) {
	const call = "restart"
	if r.restarter == nil {
		r.fail(call, errors.New("this simulation cannot start the policy afresh"))
		return
	}
	data, err := state.Marshal(nil, state.FromRestoreState(r.node.journal()))
	if err != nil {
		r.fail(call, fmt.Errorf("write the checkpoint: %w", err))
		return
	}
	j, err := state.Unmarshal(data)
	if err != nil {
		r.fail(call, fmt.Errorf("read the checkpoint: %w", err))
		return
	}
	if err := j.Check(r.limits.l); err != nil {
		// The agent drops what the node refuses and goes on; so does this.
		r.fail(call, err)
	}
	r.restore = j.RestoreState()
	t, err := r.restarter(ctx)
	r.restore = nil
	if err != nil {
		r.fail(call, err)
		return
	}
	r.client = abi.NewClient(t, abi.KeepGroups())
	pods, containers := r.node.runtimeView()
	_, annotated := j.Reconcile(pods, containers)
	annotated = r.node.withExited(annotated, exited)
	resp, err := r.client.Synchronize(ctx, &abi.SynchronizeRequest{Pods: pods, Containers: annotated})
	if r.called("Synchronize", err) {
		r.applyUpdates("Synchronize", resp.GetUpdates(), "")
	}
	for _, p := range r.node.pods {
		for _, id := range p.containers {
			r.step.Containers = append(r.step.Containers, containerReport(p.sandbox, r.node.containers[id]))
		}
	}
}

// runtimeView is what the runtime reports in Synchronize: every pod, and
// every container with the resources (cpusets included) it applied, but not
// what the agent assigned.
func (n *node) runtimeView() ([]*abi.PodSandbox, []*abi.Container) {
	var pods []*abi.PodSandbox
	var containers []*abi.Container
	for _, p := range n.pods {
		pods = append(pods, p.sandbox.CloneVT())
		for _, id := range p.containers {
			c := n.containers[id].CloneVT()
			c.Assignment = nil
			containers = append(containers, c)
		}
	}
	return pods, containers
}

// ExitedSuffix ends the id a restart step gives an exited predecessor in
// Synchronize: the scenario's ids derive from names, so the predecessor
// and its successor would otherwise share one. No name can hold '/'.
const ExitedSuffix = "/exited"

// withExited puts, before each container of exited in list, its removed
// predecessor as the runtime still lists it: the same pod and name, its own
// id, state STOPPED, the resources it ran with and no assignment.
func (n *node) withExited(list []*abi.Container, exited []Target) []*abi.Container {
	for _, t := range exited {
		id := containerID(t.Pod, t.Container)
		prev := n.gone[id]
		i := slices.IndexFunc(list, func(c *abi.Container) bool { return c.Id == id })
		if prev == nil || i < 0 {
			continue
		}
		c := prev.CloneVT()
		c.Id, c.State, c.Assignment = id+ExitedSuffix, abi.ContainerState_CONTAINER_STATE_STOPPED, nil
		list = slices.Insert(list, i, c)
	}
	return list
}
