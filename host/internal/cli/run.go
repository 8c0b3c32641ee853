package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/cpumap"
	"github.com/nriwasm/nriwasm/host/fleet"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/nri"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/shadow"
	"github.com/nriwasm/nriwasm/host/topology"
)

func newRun() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the node agent: serve the container runtime over NRI with a Wasm policy",
		Long: `run is the node agent. It reads the configuration file (--config; every
field has a default, so without a file the built-in topology-aware policy runs),
discovers the node's topology from sysfs, loads the policy (a built-in name or a
.wasm file; compiled code is cached in policy.cacheDir), restores its
checkpoint from the state directory, connects to the runtime's NRI socket
(reconnecting whenever the runtime restarts) and serves /metrics, /healthz and
/readyz, until SIGINT or SIGTERM. A changed configuration file is applied live
when only the policy's configuration changed, and a changed policy.name,
policy.memoryLimit or policy.callTimeout swaps the policy live if its restore
moves no running container (docs/rollout.md). Flags override the file's
fields. docs/agent.md describes the agent, host/config/README.md every field.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAgent(cmd.Context(), cmd.ErrOrStderr(), f) },
	}
	f.register(cmd)
	return cmd
}

// runAgent wires the agent's parts to the resource manager and runs it until
// ctx ends (a signal) or a part fails.
func runAgent(ctx context.Context, stderr io.Writer, f runFlags) error {
	begin := time.Now()
	cfg, err := f.load()
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.Log.Verbosity)
	clock := newStartClock(log, begin)
	clock.step("configuration")
	// The topology is discovered on the other core while the policy
	// resolves (the module copied and hashed): neither needs the other.
	topoc := make(chan discovered, 1)
	go func() { topoc <- discover(cfg) }()
	filePolicy := cfg.Policy
	fl := startFleet(ctx, cfg, log)
	pol, err := startPolicy(ctx, cfg, log)
	if err != nil && fl.fallBack(cfg, filePolicy, err, log) {
		pol, err = startPolicy(ctx, cfg, log)
	}
	d := <-topoc
	if d.err != nil {
		return d.err
	}
	if err != nil {
		return err
	}
	topo, available := d.topo, d.available
	clock.step("policy resolved, topology discovered")
	name := pol.Identity.Name
	met := metrics.New()
	// An address in use is retried (listenMetrics): with hostNetwork, the
	// agent a surge upgrade replaces holds it until it exits.
	l, err := metrics.Listen(cfg.Metrics.Address)
	if err != nil && !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	metricsAddr := cfg.Metrics.Address
	if l != nil {
		metricsAddr = l.Addr().String()
	}
	// The probes answer while standing by (ready: a surge upgrade waits for
	// it) or once every part is up (ready after the runtime's first
	// Synchronize). Readiness does not depend on the metrics address.
	var standby atomic.Bool
	var mgr atomic.Pointer[resmgr.Manager]
	var shadowed atomic.Pointer[shadow.Shadow]
	ready := func() error {
		if standby.Load() {
			return nil
		}
		if m := mgr.Load(); m != nil {
			return m.Ready()
		}
		return errors.New("starting")
	}
	srvCtx, stopServer := context.WithCancel(ctx)
	srvErr := make(chan error, 1)
	served := make(chan struct{})
	var serveOnce sync.Once
	serve := func() {
		serveOnce.Do(func() {
			go func() {
				defer close(served)
				if l == nil {
					var err error
					if l, err = listenMetrics(srvCtx, cfg.Metrics.Address, &standby, log); err != nil {
						srvErr <- err
						return
					}
				}
				srvErr <- metrics.Serve(srvCtx, l, agentHandler(met, ready, topo, &mgr, &shadowed))
			}()
		})
	}
	log.Info("agent started", "policy", name, "socket", cfg.NRI.SocketPath, "metrics", metricsAddr,
		"cpus", len(topo.GetCpus()), "numaNodes", len(topo.GetNumaNodes()))
	clock.step("metrics")
	release, held, err := lockStateDir(ctx, cfg.StateDir, log, &standby, serve)
	if err != nil {
		stopServer()
		return err
	}
	clock.step("state directory lock")
	defer release()
	// Runs before release: the metrics address is free before the state
	// directory, so an agent taking over binds it at once.
	defer func() {
		stopServer()
		serveOnce.Do(func() { // never served: only the listener to close
			if l != nil {
				l.Close()
			}
			close(served)
		})
		<-served
	}()
	if !held {
		return nil // signalled while standing by
	}
	if cfg.Policy.CacheDir != "" {
		// What an agent killed mid-compile left; in the background, as
		// readiness does not need it.
		go removeStaleCompiles(cfg.Policy.CacheDir, log)
	}
	newManager := func() (*resmgr.Manager, error) {
		opts := []resmgr.Option{
			resmgr.WithNodeName(nodeName()), resmgr.WithDriverName(pol.DriverName),
			resmgr.WithLogger(log), resmgr.WithMetrics(met),
			resmgr.WithIdentity(pol.Identity), resmgr.WithResolve(resolver(log)),
		}
		if available != nil {
			opts = append(opts, resmgr.WithAvailableCPUs(available))
		}
		return resmgr.New(ctx, cfg, topo, pol.Load, opts...)
	}
	m, err := newManager()
	if err != nil && fl.fallBack(cfg, filePolicy, err, log) {
		if pol, err = startPolicy(ctx, cfg, log); err == nil {
			name = pol.Identity.Name
			m, err = newManager()
		}
	}
	if err != nil {
		return err
	}
	clock.step("resource manager and policy")
	// Loading the policy (instrumenting and compiling it, or reading it from
	// the compilation cache) leaves tens of MiB of garbage that the Go runtime
	// would return to the OS only minutes later: return it now, once, so the
	// agent's steady RSS is not its start-up peak (docs/performance.md,
	// "Footprint": 228 → 109 MiB after a cold start, 126 → 106 MiB warm). In
	// the background: the forced collection and scavenge took 50–230 ms of
	// the start to ready (load ≈ 23), and readiness does not need them.
	go debug.FreeOSMemory()
	mgr.Store(m)
	// Most of the executable's resident pages were touched once, by package
	// initialization and the start: drop them from the agent's page tables
	// once it is ready (docs/performance.md, "Agent RSS, per component").
	go releaseWhenReady(ctx, ready, log)
	// And again after each burst of work (settle.go).
	go settleAfterBursts(ctx, log)
	if s, err := startShadow(cfg, topo, available, draDriverName(cfg, name), m, log, met); err != nil {
		return err
	} else if s != nil {
		shadowed.Store(s)
	}
	if err := startRecord(cfg, name, topo, draDriverName(cfg, name), m, log); err != nil {
		return err
	}
	drv, err := startDRA(cfg, name, m, log)
	if err != nil {
		return err
	}
	clock.step("shadow, record and DRA")
	loc, err := topology.NewLocator(cfg.Sysfs)
	if err != nil {
		return err
	}
	plugin, err := nri.New(m, cfg.NRI.SocketPath, cfg.NRI.PluginName, string(cfg.NRI.PluginIndex),
		nri.WithLogger(log), nri.WithMetrics(met), nri.WithLocator(loc))
	if err != nil {
		return err
	}
	m.SetUpdateSink(plugin.Send)
	var fa *fleet.Agent
	if fl != nil {
		republish := func() {
			if drv != nil {
				drv.Republish()
			}
		}
		if fa, err = fl.agent(m, republish, log.WithName("fleet")); err != nil {
			return err
		}
		m.Go("fleet", fa.Run)
	}
	serve()
	m.Go("nri", plugin.Run)
	m.Go("metrics", func(ctx context.Context) error {
		select {
		case err := <-srvErr:
			return err
		case <-ctx.Done():
			return nil
		}
	})
	if iv := time.Duration(cfg.Policy.Swap.CheckInterval); iv > 0 {
		m.Go("policy-recheck", recheckPolicy(m, iv))
	}
	if f.config != "" {
		m.Go("config", func(ctx context.Context) error {
			return config.Watch(ctx, f.config, func(c *config.Config, err error) {
				if err == nil {
					err = f.override(c)
				}
				if err == nil && fa != nil {
					fa.Overlay(c)
				}
				if m.ApplyConfig(ctx, c, err) == nil && drv != nil { // a refusal is logged and counted there
					drv.Republish()
				}
			})
		})
	}
	clock.step("components (the runtime's first Synchronize follows)")
	if err := m.Run(ctx); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// discovered is the node's topology (restricted to available, the
// availableCPUs setting's CPUs, nil for all), or why it is not known.
type discovered struct {
	topo      *abi.Topology
	available []uint32
	err       error
}

// discover discovers the topology from cfg.Sysfs and applies cfg's
// availableCPUs; it reads only those two fields of cfg.
func discover(cfg *config.Config) discovered {
	topo, err := topology.Discover(cfg.Sysfs)
	if err != nil {
		return discovered{err: err}
	}
	available, err := availableCPUs(cfg, topo, cgroupRoot)
	return discovered{topo: topo, available: available, err: err}
}

// cgroupRoot is the cgroup mount availableCPUs: cgroup reads.
const cgroupRoot = "/sys/fs/cgroup"

// availableCPUs resolves the availableCPUs setting: nil for every online CPU;
// else the CPUs, to which topo is restricted (the policy sees only them, and
// answers outside them are refused).
func availableCPUs(cfg *config.Config, topo *abi.Topology, cgroupRoot string) ([]uint32, error) {
	var set cpuset.Set
	switch v := cfg.AvailableCPUs; v {
	case config.AvailableOnline, "":
		return nil, nil
	case config.AvailableCgroup:
		var err error
		if set, err = topology.PodsCgroupCPUs(cgroupRoot); err != nil {
			return nil, fmt.Errorf("availableCPUs: cgroup: %w", err)
		}
	default:
		var err error
		if set, err = cpuset.Parse(v); err != nil {
			return nil, fmt.Errorf("availableCPUs: %q: %w", v, err)
		}
	}
	if err := topology.Restrict(topo, set); err != nil {
		return nil, fmt.Errorf("availableCPUs: %w", err)
	}
	return set.Sorted(), nil
}

// nodeName is $NODE_NAME (set from the downward API), or the host name.
func nodeName() string {
	if n := os.Getenv("NODE_NAME"); n != "" {
		return n
	}
	n, _ := os.Hostname()
	return n
}

// agentHandler serves the metrics port: /metrics and the probes, and at
// /debug/cpus the live CPU map of the node: the containers by the cpusets the
// agent applied and, when the policy answers Pools, its pools (503 until the
// resource manager runs; without the pools, said in the map's note, if the
// policy's answer is refused), and at /debug/shadow the shadow policy's
// report.
func agentHandler(met *metrics.Metrics, ready func() error, topo *abi.Topology, mgr *atomic.Pointer[resmgr.Manager], sh *atomic.Pointer[shadow.Shadow]) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", metrics.Handler(met, ready))
	mux.Handle("/debug/shadow", shadowHandler(sh))
	mux.Handle("/debug/cpus", cpumap.Handler(func(ctx context.Context) (*cpumap.Map, error) {
		m := mgr.Load()
		if m == nil {
			return nil, errors.New("the resource manager is not running yet")
		}
		pools, poolsErr := m.Pools(ctx)
		return liveMap(topo, m.Journal(), pools, poolsErr), nil
	}))
	return mux
}

// liveMap is /debug/cpus' map: the journal's containers and the policy's
// pools. A refused Pools answer (poolsErr other than resmgr.ErrNoPools)
// leaves the pools off the map, not the map off the page: the containers'
// CPUs are the agent's own record; the map's note says why.
func liveMap(topo *abi.Topology, journal *abi.RestoreState, pools []resmgr.Pool, poolsErr error) *cpumap.Map {
	holdings := cpumap.Containers(journal)
	for _, p := range pools {
		holdings = append(holdings, cpumap.Holding{Name: p.Name, Kind: cpumap.KindPool, CPUs: cpuset.New(p.CPUs...)})
	}
	cm := cpumap.Build(topo, holdings, nil)
	cm.Title = "CPUs of node " + nodeName()
	if poolsErr != nil && !errors.Is(poolsErr, resmgr.ErrNoPools) {
		cm.Note = fmt.Sprintf("the policy's pools are not shown: %v", poolsErr)
	}
	return cm
}
