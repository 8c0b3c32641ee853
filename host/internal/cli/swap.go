package cli

import (
	"context"
	"time"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/resmgr"
)

// startPolicy resolves the policy the agent starts with: cfg's policy.name,
// or, when it is the OCI reference the state directory's record names (the
// policy the agent ran last, perhaps swapped to live), the digest recorded
// there, so a restart keeps the policy it ran rather than what the tag names
// now; Recheck swaps to that through the swap's check (docs/rollout.md).
// The recorded digest failing to load, the reference is loaded as it is.
func startPolicy(ctx context.Context, cfg *config.Config, log logr.Logger) (resmgr.Candidate, error) {
	if rec, ok := resmgr.RecordedIdentity(cfg.StateDir); ok && cfg.Policy.IsOCI() && rec.Reference == cfg.Policy.Name && rec.Pinned != "" {
		c, err := agentPolicy(ctx, cfg, rec.Pinned, log)
		if err == nil {
			log.Info("starting with the policy digest the agent ran last; the reference is checked again once running",
				"reference", cfg.Policy.Name, "pinned", rec.Pinned)
			return c, nil
		}
		log.Error(err, "the policy digest the agent ran last does not load; loading the reference as it is", "pinned", rec.Pinned)
	}
	return agentPolicy(ctx, cfg, cfg.Policy.Name, log)
}

// resolver is the manager's resmgr.ResolveFunc: a changed configuration's
// policy.name loaded as at start (built-in, file, or OCI reference through
// the registry and its cache), to run with that configuration's limits.
func resolver(log logr.Logger) resmgr.ResolveFunc {
	return func(ctx context.Context, cfg *config.Config) (resmgr.Candidate, error) {
		return agentPolicy(ctx, cfg, cfg.Policy.Name, log)
	}
}

// recheckPolicy resolves an OCI policy.name again every interval (and once
// at start, after a restart that kept the digest it ran last) and swaps when
// it names another module; another policy.name is not resolved again.
// Failures are logged and counted by the manager.
func recheckPolicy(m *resmgr.Manager, interval time.Duration) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_ = m.Recheck(ctx)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				_ = m.Recheck(ctx)
			}
		}
	}
}
