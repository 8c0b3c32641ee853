// Package fleet takes the agent's policy and policy configuration from the
// cluster: the PolicyConfig objects (nriwasm.io/v1alpha1, package v1alpha1)
// that select the agent's node, and reports in each object's status, for
// its own node only, what it applied.
//
// Agent watches the node it runs on (one object, by field selector) and the
// PolicyConfig objects, chooses with Select, hands the choice to an Applier
// (the agent's existing validation and reconfiguration path) and writes its
// node's status entry with server-side apply under its own field manager.
// A configuration the Applier refuses keeps the last good one running and
// is reported with the error. docs/fleet.md describes the whole feature.
package fleet

import (
	"context"
	"fmt"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/resmgr"
)

// Outcome is what an Applier did with a selection.
type Outcome struct {
	// Err is nil when the selection now runs; else why not: a
	// *config.RestartError or resmgr.ErrRestartRequired when it needs a
	// restart, any other error when it was refused. The running
	// configuration stays in either case.
	Err error
	// Policy and PolicyDigest name the policy running after the call.
	Policy, PolicyDigest string
}

// Applier applies a policy (a built-in name or an OCI reference) and its
// configuration (JSON, nil for none) on the node.
type Applier func(ctx context.Context, policy string, config []byte) Outcome

// Reconfigurer is the agent's configuration path (*resmgr.Manager).
type Reconfigurer interface {
	// Config returns the running configuration.
	Config() *config.Config
	// ApplyConfig applies a new configuration (a different policy by a live
	// swap), or logs and counts loadErr.
	ApplyConfig(ctx context.Context, cfg *config.Config, loadErr error) error
	// Identity names the running policy module.
	Identity() resmgr.Identity
}

// Running is the Outcome naming m's running policy.
func Running(m Reconfigurer) Outcome {
	id := m.Identity()
	return Outcome{Policy: id.Name, PolicyDigest: id.Digest}
}

// ManagerApplier is the Applier of a running agent: it puts the chosen
// policy and configuration over the running configuration (Overlay),
// validates that and hands it to m.ApplyConfig — which swaps to a different
// policy live and refuses a restart-only change — and calls applied (if not
// nil) when it applied. The Outcome names the policy running after the call.
func ManagerApplier(m Reconfigurer, applied func()) Applier {
	return func(ctx context.Context, policy string, data []byte) Outcome {
		c := *m.Config()
		Overlay(&c, policy, data)
		err := c.Validate()
		if err == nil {
			err = m.ApplyConfig(ctx, &c, nil)
		} else {
			err = m.ApplyConfig(ctx, nil, fmt.Errorf("spec: %w", err))
		}
		if err == nil && applied != nil {
			applied()
		}
		out := Running(m)
		out.Err = err
		return out
	}
}
