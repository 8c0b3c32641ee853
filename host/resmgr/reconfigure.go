package resmgr

import (
	"context"
	"errors"
	"fmt"

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
//   - A changed policy configuration goes to the policy's Reconfigure under the
//     lock. If the policy refuses it (or its updates fail the checks), the
//     running one stays (result="rejected"); else the new configuration is in
//     force, also for instances rebuilt later, and the policy's updates go to
//     the update sink (result="applied").
//   - A policy configuration that would turn DRA on or off (while dra.enabled
//     is unset) is refused after the policy accepted it: the policy gets the
//     running configuration back, and the message asks for a restart
//     (result="restart_required").
//
// It returns the reason for a refusal, nil when applied or unchanged.
func (m *Manager) ApplyConfig(ctx context.Context, cfg *config.Config, loadErr error) error {
	if loadErr != nil {
		m.metrics.ConfigReload(metrics.ReloadInvalid)
		m.log.Error(loadErr, "configuration change refused; the running configuration stays")
		return loadErr
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	change := config.Diff(m.cfg, cfg)
	if change.IsZero() {
		return nil
	}
	if err := change.Err(); err != nil {
		m.metrics.ConfigReload(metrics.ReloadRestartRequired)
		m.log.Error(err, "configuration change refused; the running configuration stays until a restart")
		return err
	}
	var resp *abi.ReconfigureResponse
	err := m.call(ctx, abi.Method_METHOD_RECONFIGURE, func(ctx context.Context) (err error) {
		resp, err = m.client.Reconfigure(ctx, &abi.ReconfigureRequest{Config: cfg.Policy.Data})
		return err
	})
	if err != nil {
		m.metrics.ConfigReload(metrics.ReloadRejected)
		m.log.Error(err, "policy rejected the new configuration; the running one stays")
		return fmt.Errorf("reconfigure policy: %w", err)
	}
	if cfg.DRA.Enabled == nil && resp.GetWantsDra() != m.wantsDRA {
		err := fmt.Errorf("the policy's new configuration turns DRA %s: restart the agent to apply it", onOff(resp.GetWantsDra()))
		m.rollBack(ctx, err)
		return err
	}
	updates, ok := m.acceptUpdates(abi.Method_METHOD_RECONFIGURE, resp.GetUpdates(), "")
	if !ok {
		m.metrics.ConfigReload(metrics.ReloadRejected)
		return errors.New("reconfigure policy: its updates were refused")
	}
	m.cfg = cfg
	m.metrics.ConfigReload(metrics.ReloadApplied)
	m.log.Info("policy configuration applied", "updates", len(updates), "wantsDRA", resp.GetWantsDra())
	if len(updates) > 0 && m.updateSink != nil {
		m.updateSink(updates)
	}
	return nil
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
		if updates, ok := m.acceptUpdates(abi.Method_METHOD_RECONFIGURE, resp.GetUpdates(), ""); ok && len(updates) > 0 && m.updateSink != nil {
			m.updateSink(updates)
		}
		return
	}
	m.log.Error(err, "policy refused its running configuration back; rebuilding its instance")
	m.policy.Discard(ctx)
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
