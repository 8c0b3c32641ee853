package resmgr

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
)

// ErrNotSynchronized refuses claims until the runtime's first Synchronize was
// handled: before it, the policy does not know which containers run.
var ErrNotSynchronized = errors.New("claims are refused until the container runtime's first NRI Synchronize has been handled")

// WantsDRA reports whether the policy's configuration asks for DRA devices
// (its last Init or accepted Reconfigure said so).
func (m *Manager) WantsDRA() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.wantsDRA
}

// Devices asks the policy for the devices this node offers and checks them
// against the ResourceSlice rules; a refused answer is logged, counted and
// returned as the error.
func (m *Manager) Devices(ctx context.Context) (*abi.DevicesResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var resp *abi.DevicesResponse
	err := m.call(ctx, abi.Method_METHOD_DEVICES, func(ctx context.Context) (err error) {
		resp, err = m.client.Devices(ctx, &abi.DevicesRequest{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("policy %q: devices: %w", m.cfg.Policy.Name, err)
	}
	if err := validate.Devices(resp); err != nil {
		m.refused(abi.Method_METHOD_DEVICES, err)
		return nil, fmt.Errorf("policy %q: devices refused: %w", m.cfg.Policy.Name, err)
	}
	return resp, nil
}

// PrepareClaim prepares a claim under the lock: the policy's Allocate, its
// answer checked, write (the CDI spec) run with it, then the claim journaled
// and the answer's container updates applied and sent. A claim already
// prepared with the same allocation results answers what it was given before,
// without asking the policy again (kubelet repeats Prepare), write included.
// If write fails the policy releases the claim again and nothing is kept.
func (m *Manager) PrepareClaim(ctx context.Context, claim *abi.Claim, write func(*abi.AllocateResponse) error) (*abi.AllocateResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.synced.Load() {
		return nil, ErrNotSynchronized
	}
	log := m.log.WithValues("claim", claim.GetNamespace()+"/"+claim.GetName(), "claimUID", claim.GetUid())
	if prev, ok := m.journal.Claim(claim.GetUid()); ok {
		if !abi.SameResults(prev.GetClaim(), claim) {
			return nil, fmt.Errorf("claim %s/%s (%s) is already prepared with other allocation results: unprepare it first",
				claim.GetNamespace(), claim.GetName(), claim.GetUid())
		}
		if err := write(prev.GetAllocation()); err != nil {
			return nil, err
		}
		log.V(1).Info("claim already prepared")
		return prev.GetAllocation(), nil
	}
	var resp *abi.AllocateResponse
	err := m.call(ctx, abi.Method_METHOD_ALLOCATE, func(ctx context.Context) (err error) {
		resp, err = m.client.Allocate(ctx, &abi.AllocateRequest{Claim: claim})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("policy %q: allocate: %w", m.cfg.Policy.Name, err)
	}
	if err := validate.Prepared(resp, claim); err != nil {
		m.refused(abi.Method_METHOD_ALLOCATE, err)
		m.undoAllocate(ctx, claim, log)
		return nil, fmt.Errorf("policy %q: allocate answer refused: %w", m.cfg.Policy.Name, err)
	}
	if err := m.limits.Updates("updates", resp.GetUpdates(), m.live); err != nil {
		m.refused(abi.Method_METHOD_ALLOCATE, err)
		m.undoAllocate(ctx, claim, log)
		return nil, fmt.Errorf("policy %q: allocate answer refused: %w", m.cfg.Policy.Name, err)
	}
	if err := write(resp); err != nil {
		m.undoAllocate(ctx, claim, log)
		return nil, err
	}
	m.journal.AddClaim(&abi.PreparedClaim{Claim: claim, Allocation: resp})
	m.applyUpdates(resp.GetUpdates())
	m.changed()
	log.Info("claim prepared", "devices", len(resp.GetDevices()), "updates", abi.CountContainers(resp.GetUpdates()))
	return resp, nil
}

// UnprepareClaim releases a prepared claim under the lock: the policy's
// Release, remove (the CDI spec) run, the claim forgotten and the answer's
// updates applied and sent. A claim that is not prepared only runs remove
// (kubelet repeats Unprepare, and may unprepare what a previous agent
// prepared). A policy that does not know the claim (NOT_FOUND) counts as
// released.
func (m *Manager) UnprepareClaim(ctx context.Context, uid string, remove func() error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	prev, ok := m.journal.Claim(uid)
	if !ok {
		return remove()
	}
	claim := prev.GetClaim()
	log := m.log.WithValues("claim", claim.GetNamespace()+"/"+claim.GetName(), "claimUID", uid)
	var resp *abi.ReleaseResponse
	err := m.call(ctx, abi.Method_METHOD_RELEASE, func(ctx context.Context) (err error) {
		resp, err = m.client.Release(ctx, &abi.ReleaseRequest{Claim: claim})
		return err
	})
	if pe, isPE := errors.AsType[*abi.PolicyError](err); isPE && pe.Code == abi.ErrorCode_ERROR_CODE_NOT_FOUND {
		log.Info("policy did not know the claim; forgetting it", "reason", pe.Message)
		err, resp = nil, nil
	}
	if err != nil {
		return fmt.Errorf("policy %q: release: %w", m.cfg.Policy.Name, err)
	}
	if err := m.limits.Updates("updates", resp.GetUpdates(), m.live); err != nil {
		// The claim is released in the policy whatever its updates say.
		m.refused(abi.Method_METHOD_RELEASE, err)
		resp = nil
	}
	if err := remove(); err != nil {
		return err
	}
	m.journal.RemoveClaim(uid)
	m.applyUpdates(resp.GetUpdates())
	m.changed()
	log.Info("claim unprepared", "updates", abi.CountContainers(resp.GetUpdates()))
	return nil
}

// PreparedClaims lists the uids of the journaled claims, sorted.
func (m *Manager) PreparedClaims() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.journal.ClaimUIDs()
}

// undoAllocate releases a claim whose preparation failed after the policy
// allocated it; a failure is logged (a rebuilt instance forgets it anyway).
func (m *Manager) undoAllocate(ctx context.Context, claim *abi.Claim, log logr.Logger) {
	err := m.call(ctx, abi.Method_METHOD_RELEASE, func(ctx context.Context) error {
		_, err := m.client.Release(ctx, &abi.ReleaseRequest{Claim: claim})
		return err
	})
	if err != nil {
		log.Error(err, "releasing a claim whose preparation failed")
	}
}

// live reports whether a container is journaled.
func (m *Manager) live(id string) bool {
	return m.journal.HasContainer(id)
}

// applyUpdates journals checked updates, every member of a group, and sends
// them to the runtime (grouped: host/nri expands them).
func (m *Manager) applyUpdates(us []*abi.ContainerUpdate) {
	for _, u := range us {
		m.journal.ApplyUpdate(u)
	}
	if len(us) > 0 && m.updateSink != nil {
		m.updateSink(us)
	}
}
