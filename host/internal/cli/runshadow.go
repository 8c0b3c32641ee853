package cli

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/record"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/shadow"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/host/wasm"
)

// startShadow runs policy.shadow beside the active policy, if configured:
// the module is resolved, pulled and compiled on the shadow's own goroutine,
// so neither the agent's start nor its requests wait for it. It returns nil
// when no shadow is configured.
func startShadow(cfg *config.Config, topo *abi.Topology, available []uint32, driver string, m *resmgr.Manager, log logr.Logger, met *metrics.Metrics) (*shadow.Shadow, error) {
	sh := cfg.Policy.Shadow
	if sh == nil {
		return nil, nil
	}
	section := sh.Policy(&cfg.Policy)
	shadowCfg := *cfg
	shadowCfg.Policy = *section
	slog := log.WithName("shadow")
	var limitOpts []validate.Option
	if available != nil {
		limitOpts = append(limitOpts, validate.WithAvailableCPUs(available))
	}
	load := func(ctx context.Context, restore wasm.RestoreFunc) (resmgr.Policy, error) {
		c, err := agentPolicy(ctx, &shadowCfg, shadowCfg.Policy.Name, slog)
		if err != nil {
			return nil, err
		}
		return c.Load(ctx, restore)
	}
	limits, err := validate.New(topo, limitOpts...)
	if err != nil {
		return nil, fmt.Errorf("shadow: %w", err)
	}
	s, err := shadow.New(sh.Name, load, topo, limits, m.Snapshot,
		shadow.WithConfig(sh.Data), shadow.WithNodeName(nodeName()), shadow.WithDriverName(driver),
		shadow.WithQueue(sh.QueueLength), shadow.WithKeep(sh.Keep), shadow.WithMaxFailures(sh.MaxFailures),
		shadow.WithLogger(log), shadow.WithMetrics(met))
	if err != nil {
		return nil, err
	}
	m.AddObserver(s)
	m.Go("shadow", s.Run)
	return s, nil
}

// shadowHandler serves the shadow's report at /debug/shadow: 404 while none
// is configured (or the agent has not started it yet).
func shadowHandler(sh *atomic.Pointer[shadow.Shadow]) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := sh.Load()
		if s == nil {
			http.Error(w, "no shadow policy: set policy.shadow in the agent's configuration (docs/rollout.md)", http.StatusNotFound)
			return
		}
		s.Handler().ServeHTTP(w, r)
	})
}

// startRecord keeps the agent's record of requests and answers under
// record.dir, unless record.maxSize is 0. Its first file starts now, from the
// journal the policy was restored with.
func startRecord(cfg *config.Config, name string, topo *abi.Topology, driver string, m *resmgr.Manager, log logr.Logger) error {
	if cfg.Record.MaxSize == 0 {
		return nil
	}
	dir := cfg.Record.Dir
	if dir == "" {
		dir = filepath.Join(cfg.StateDir, "record")
	}
	w, err := record.NewWriter(dir, int64(cfg.Record.MaxSize),
		record.Header{NodeName: nodeName(), Policy: name, Config: cfg.Policy.Data, DriverName: driver, Topology: topo},
		m.Snapshot, record.WithLogger(log))
	if err != nil {
		return err
	}
	m.AddObserver(w)
	if err := w.Open(); err != nil {
		return fmt.Errorf("record.dir: %w", err)
	}
	m.Go("record", w.Run)
	return nil
}
