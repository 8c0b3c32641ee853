package resmgr

import (
	"context"
	"errors"
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// fallback is how a new policy instance is initialized. A restore from the
// journal that fails (a policy error, a trap, a deadline, running out of
// memory) moves to the next way, for the life of the process: the running
// containers are never dropped from the journal, and the agent keeps serving.
type fallback int

const (
	// fromJournal: Init with every pod, container and claim of the journal.
	fromJournal fallback = iota
	// adoptLive: Init with nothing restored, then Synchronize with the
	// journal's pods and containers, each with its assignment, as after a
	// runtime reconnect: the policy adopts them where they are. Its updates
	// are not applied, so nothing moves; prepared claims stay prepared but
	// the policy no longer knows them.
	adoptLive
	// fresh: Init with nothing restored. The policy knows none of the running
	// containers; they keep their cpusets, and new containers may be given
	// CPUs they use.
	fresh
)

func (f fallback) String() string {
	return [...]string{"from the journal", "adopting the live containers through Synchronize", "fresh, without the live containers"}[f]
}

// load loads the policy, falling back while its first instance's restore
// fails.
func (m *Manager) load(ctx context.Context, load LoadFunc) (Policy, error) {
	for {
		fb := m.fallback
		p, err := load(ctx, m.restore)
		if err == nil || !errors.Is(err, wasm.ErrRestore) || m.fallback == fb {
			return p, err
		}
	}
}

// restore initializes a new policy instance as m.fallback says. The policy
// calls it while the manager's lock is held by the request that needs the
// instance (or from New, before any request). When it fails and a fallback
// is left, it logs an ERROR naming the cause, moves to the next, and returns
// the error: the instance is discarded and the next one falls back.
func (m *Manager) restore(ctx context.Context, t abi.Transport) error {
	rs := m.journal.RestoreState()
	var err error
	switch m.fallback {
	case fromJournal:
		err = m.initialize(ctx, t, rs)
	case adoptLive:
		if err = m.initialize(ctx, t, &abi.RestoreState{}); err == nil {
			err = m.adopt(ctx, t, rs)
		}
	case fresh:
		err = m.initialize(ctx, t, &abi.RestoreState{})
	}
	if err != nil {
		if m.fallback < fresh {
			m.fallback++
			m.log.Error(err, "policy instance could not be initialized; the next one is initialized another way",
				"failed", (m.fallback - 1).String(), "next", m.fallback.String(),
				"pods", len(rs.Pods), "containers", len(rs.Containers), "claims", len(rs.Claims))
		}
		return err
	}
	if m.fallback != fromJournal {
		reason := fmt.Errorf("degraded: the policy could not be restored from the journal; its instance was initialized %s", m.fallback)
		m.degraded.Store(&reason)
		m.metrics.Degraded(true)
		m.log.Error(reason, "policy running degraded; restart the agent to restore from the journal again",
			"pods", len(rs.Pods), "containers", len(rs.Containers), "claims", len(rs.Claims))
		return nil
	}
	m.log.Info("policy instance initialized", "pods", len(rs.Pods), "containers", len(rs.Containers), "claims", len(rs.Claims))
	return nil
}

// adopt hands the journal's pods and containers to a fresh instance through
// Synchronize. Its updates are dropped: the containers keep their cpusets.
func (m *Manager) adopt(ctx context.Context, t abi.Transport, rs *abi.RestoreState) error {
	resp, err := abi.NewClient(t, abi.KeepGroups()).Synchronize(ctx, &abi.SynchronizeRequest{Pods: rs.Pods, Containers: rs.Containers})
	if err != nil {
		return fmt.Errorf("adopt through synchronize: %w", err)
	}
	if n := abi.CountContainers(resp.GetUpdates()); n > 0 {
		m.log.Info("adopting policy instance asked to move containers; not applied, they keep their cpusets", "updates", n)
	}
	return nil
}
