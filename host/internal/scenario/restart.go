package scenario

import (
	"context"
	"errors"
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/state"
)

// runRestart restarts the agent as host/resmgr starts: the journal goes
// through the checkpoint format (written and read back), is checked against
// the node's limits, and a new policy instance's Init restores it; then the
// runtime's Synchronize reports every pod and container with the cpusets it
// applied, and the journal's assignments are put back on them
// (state.Journal.Reconcile) before the policy sees them. The step reports
// every live container as it is afterwards.
func (r *Runner) runRestart(ctx context.Context) {
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
	r.client = abi.NewClient(t)
	pods, containers := r.node.runtimeView()
	_, annotated := j.Reconcile(pods, containers)
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
