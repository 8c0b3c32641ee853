package cli

import (
	"context"
	"time"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/resmgr"
)

// identity is the resmgr.Identity of p loaded for reference (policy.name).
func (p loadedPolicy) identity(reference string) resmgr.Identity {
	return resmgr.Identity{Reference: reference, Name: p.name, Digest: resmgr.ModuleDigest(p.module), Pinned: p.pinned}
}

// startPolicy loads the policy the agent starts with: cfg's policy.name, or,
// when it is the OCI reference the state directory's record names (the
// policy the agent ran last, perhaps swapped to live), the digest recorded
// there, so a restart keeps the policy it ran rather than what the tag names
// now; Recheck swaps to that through the swap's check (docs/rollout.md).
// The recorded digest failing to load, the reference is loaded as it is.
func startPolicy(ctx context.Context, cfg *config.Config, log logr.Logger) (loadedPolicy, error) {
	src, err := agentSource(cfg, log)
	if err != nil {
		return loadedPolicy{}, err
	}
	if rec, ok := resmgr.RecordedIdentity(cfg.StateDir); ok && cfg.Policy.IsOCI() && rec.Reference == cfg.Policy.Name && rec.Pinned != "" {
		p, err := src.loadPolicy(ctx, rec.Pinned)
		if err == nil {
			log.Info("starting with the policy digest the agent ran last; the reference is checked again once running",
				"reference", cfg.Policy.Name, "pinned", rec.Pinned)
			return p, nil
		}
		log.Error(err, "the policy digest the agent ran last does not load; loading the reference as it is", "pinned", rec.Pinned)
	}
	return src.loadPolicy(ctx, cfg.Policy.Name)
}

// resolver is the manager's resmgr.ResolveFunc: a changed configuration's
// policy.name loaded as at start (built-in, file, or OCI reference through
// the registry and its cache), to run with that configuration's limits.
func resolver(log logr.Logger) resmgr.ResolveFunc {
	return func(ctx context.Context, cfg *config.Config) (resmgr.Candidate, error) {
		src, err := agentSource(cfg, log)
		if err != nil {
			return resmgr.Candidate{}, err
		}
		p, err := src.loadPolicy(ctx, cfg.Policy.Name)
		if err != nil {
			return resmgr.Candidate{}, err
		}
		return resmgr.Candidate{
			Identity:   p.identity(cfg.Policy.Name),
			DriverName: draDriverName(cfg, p.name),
			Load:       resmgr.WasmLoader(p.name, p.module, &cfg.Policy, log),
		}, nil
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
