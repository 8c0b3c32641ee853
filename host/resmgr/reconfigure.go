package resmgr

import (
	"context"
	"errors"
	"fmt"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
)

// Config returns the running configuration. Do not modify it.
func (m *Manager) Config() *config.Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}

// ApplyConfig applies a changed configuration file; it has config.Watch's
// callback's arguments (loadErr is the error of a file that did not load).
//
//   - A file that does not load, or a change of a field that needs a restart,
//     is refused: the running configuration stays, the reason is logged and
//     counted (nriwasm_config_reloads_total{result="invalid"|"restart_required"}).
//   - A change of the policy module or how it runs (config.Change.Swap:
//     policy.name, policy.memoryLimit, policy.callTimeout) is a swap (swap.go):
//     the new policy is loaded and restored from the journal while the old one
//     serves, and replaces it only if its restore moves at most
//     policy.swap.maxMoves live containers (of the new configuration);
//     otherwise the running one stays and the error names the containers that
//     would move (result="rejected"; "restart_required" when the swap would
//     turn DRA on or off or rename its driver).
//   - A changed policy configuration goes to the policy's Reconfigure under the
//     lock. If the policy cannot apply it live (refusedLive: it has no
//     Reconfigure, or refuses a valid configuration the running containers
//     keep from applying), the new configuration is tried by a swap instead,
//     as above; if that is refused too, the running one stays. A
//     configuration the policy finds invalid (INVALID_ARGUMENT) keeps the
//     running one without a swap (result="invalid"), as does any other
//     refusal (result="rejected"). If the policy's updates fail the checks,
//     the running configuration stays (result="rejected"); else the new
//     configuration is in force, also for instances rebuilt later, and the
//     policy's updates go to the update sink (result="applied").
//   - A policy configuration that would turn DRA on or off (while dra.enabled
//     is unset) is refused after the policy accepted it: the policy gets the
//     running configuration back, and the message asks for a restart
//     (result="restart_required").
//   - A change of policy.swap.maxMoves alone takes effect (result="applied").
//   - An unchanged file with an OCI policy.name resolves the reference again
//     (Recheck): a tag that now names another digest is swapped to.
//
// It returns the reason for a refusal, nil when applied or unchanged.
func (m *Manager) ApplyConfig(ctx context.Context, cfg *config.Config, loadErr error) error {
	if loadErr != nil {
		m.metrics.ConfigReload(metrics.ReloadInvalid)
		m.log.Error(loadErr, "configuration change refused; the running configuration stays")
		return loadErr
	}
	m.swapMu.Lock()
	defer m.swapMu.Unlock()
	m.mu.Lock()
	change := config.Diff(m.cfg, cfg)
	if change.IsZero() {
		m.mu.Unlock()
		return m.recheck(ctx)
	}
	if err := change.Err(); err != nil {
		m.mu.Unlock()
		m.metrics.ConfigReload(metrics.ReloadRestartRequired)
		m.log.Error(err, "configuration change refused; the running configuration stays until a restart")
		return err
	}
	if len(change.Swap) > 0 {
		m.mu.Unlock()
		return m.swapTo(ctx, cfg, "changed "+strings.Join(change.Swap, ", "))
	}
	if !change.PolicyConfig {
		m.cfg = cfg
		m.mu.Unlock()
		m.metrics.ConfigReload(metrics.ReloadApplied)
		m.log.Info("configuration applied", "changed", strings.Join(change.Settings, ", "))
		return nil
	}
	err, refused := m.reconfigure(ctx, cfg)
	m.mu.Unlock()
	if refused != nil && m.resolve != nil {
		return m.swapTo(ctx, cfg, "the running policy refused the configuration live: "+refused.Error())
	}
	return err
}

// reconfigure hands cfg's policy configuration to the running policy's
// Reconfigure; with the lock held. refused is the policy's refusal to apply
// it live (refusedLive), which a swap may still apply; err is the reason the
// configuration is not applied, nil when it is.
func (m *Manager) reconfigure(ctx context.Context, cfg *config.Config) (err, refused error) {
	var resp *abi.ReconfigureResponse
	err = m.call(ctx, abi.Method_METHOD_RECONFIGURE, func(ctx context.Context) (err error) {
		resp, err = m.client.Reconfigure(ctx, &abi.ReconfigureRequest{Config: cfg.Policy.Data})
		return err
	})
	if refusedLive(err) && m.resolve != nil {
		m.log.Info("policy refused the new configuration live; trying it by a swap", "reason", err.Error())
		return err, err
	}
	if pe, ok := errors.AsType[*abi.PolicyError](err); ok && pe.Code == abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT {
		m.metrics.ConfigReload(metrics.ReloadInvalid)
		m.log.Error(err, "policy found the new configuration invalid; the running one stays")
		return fmt.Errorf("reconfigure policy: invalid configuration: %w", err), nil
	}
	if err != nil {
		m.metrics.ConfigReload(metrics.ReloadRejected)
		m.log.Error(err, "policy rejected the new configuration; the running one stays")
		return fmt.Errorf("reconfigure policy: %w", err), nil
	}
	if cfg.DRA.Enabled == nil && resp.GetWantsDra() != m.wantsDRA {
		err := fmt.Errorf("%w: the policy's new configuration turns DRA %s: restart the agent to apply it", ErrRestartRequired, onOff(resp.GetWantsDra()))
		m.rollBack(ctx, err)
		return err, nil
	}
	updates, ok := m.acceptUpdates(abi.Method_METHOD_RECONFIGURE, resp.GetUpdates())
	if !ok {
		m.metrics.ConfigReload(metrics.ReloadRejected)
		return errors.New("reconfigure policy: its updates were refused"), nil
	}
	m.cfg = cfg
	m.metrics.ConfigReload(metrics.ReloadApplied)
	m.log.Info("policy configuration applied", "updates", abi.CountContainers(updates), "wantsDRA", resp.GetWantsDra())
	if len(updates) > 0 && m.updateSink != nil {
		m.updateSink(updates)
	}
	return nil, nil
}

// rollBack gives the policy the running configuration again after it accepted
// one the host refuses; if even that fails, the instance is rebuilt from the
// running configuration on the next call.
func (m *Manager) rollBack(ctx context.Context, reason error) {
	m.metrics.ConfigReload(metrics.ReloadRestartRequired)
	m.log.Error(reason, "configuration change refused; the running configuration stays until a restart")
	var resp *abi.ReconfigureResponse
	err := m.call(ctx, abi.Method_METHOD_RECONFIGURE, func(ctx context.Context) (err error) {
		resp, err = m.client.Reconfigure(ctx, &abi.ReconfigureRequest{Config: m.cfg.Policy.Data})
		return err
	})
	if err == nil {
		if updates, ok := m.acceptUpdates(abi.Method_METHOD_RECONFIGURE, resp.GetUpdates()); ok && len(updates) > 0 && m.updateSink != nil {
			m.updateSink(updates)
		}
		return
	}
	m.log.Error(err, "policy refused its running configuration back; rebuilding its instance")
	m.policy.Discard(ctx)
}

// refusedLive reports whether err is a policy's refusal of a configuration
// that a swap may still apply: UNIMPLEMENTED (no Reconfigure),
// FAILED_PRECONDITION (valid, but the running containers or claims keep it
// from applying live) or RESOURCE_EXHAUSTED (they no longer fit it in
// place). INVALID_ARGUMENT says the configuration itself is wrong, which a
// new instance would refuse as well; INTERNAL and the rest are the policy's
// own failures.
func refusedLive(err error) bool {
	pe, ok := errors.AsType[*abi.PolicyError](err)
	if !ok {
		return false
	}
	switch pe.Code {
	case abi.ErrorCode_ERROR_CODE_UNIMPLEMENTED, abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED:
		return true
	}
	return false
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
