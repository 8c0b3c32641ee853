package nri_test

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/sirupsen/logrus"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/nri"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
	"github.com/nriwasm/nriwasm/internal/builtintest"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// cacheDir holds compiled policies for every test of the package, so each
// module compiles once.
var cacheDir string

func TestMain(m *testing.M) {
	logrus.SetLevel(logrus.ErrorLevel) // the adaptation logs every event at info
	builtintest.MainWithCache(m, &cacheDir)
}

// testLogger logs to stderr when NRIWASM_TEST_LOG is set, else nowhere.
func testLogger() logr.Logger {
	if os.Getenv("NRIWASM_TEST_LOG") == "" {
		return logr.Discard()
	}
	return logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.Level(-4)}))
}

var (
	topoMu    sync.Mutex
	topoCache = map[string]*abi.Topology{}
)

// machineTopology writes a topologytest machine and discovers it, once per name.
func machineTopology(t testing.TB, name string, m topologytest.Machine) *abi.Topology {
	topoMu.Lock()
	defer topoMu.Unlock()
	if topo := topoCache[name]; topo != nil {
		return topo
	}
	dir := filepath.Join(cacheDir, "sysfs-"+name)
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	topoCache[name] = topo
	return topo
}

// agentOpts configure startAgent.
type agentOpts struct {
	policy    string // a built-in policy; default topology-aware
	onFailure config.FailurePolicy
	stateDir  string // default: a new directory
	topo      *abi.Topology
	cacheDir  string // default: the package's shared compilation cache
}

// agent is the node agent, in-process: the resource manager with the NRI
// plugin as its component.
type agent struct {
	m        *resmgr.Manager
	metrics  *metrics.Metrics
	stateDir string
	cancel   context.CancelFunc
	done     chan error
}

func startAgent(t testing.TB, rt *fakeRuntime, o agentOpts) *agent {
	t.Helper()
	if o.policy == "" {
		o.policy = builtin.Default
	}
	if o.stateDir == "" {
		o.stateDir = t.TempDir()
	}
	if o.topo == nil {
		o.topo = machineTopology(t, "server2socket", topologytest.Server2Socket4NodesInterleaved())
	}
	cfg := config.Default()
	cfg.Policy.Name = o.policy
	cfg.Policy.CacheDir = cmp.Or(o.cacheDir, cacheDir)
	cfg.StateDir = o.stateDir
	cfg.NRI.SocketPath = rt.socket
	if o.onFailure != "" {
		cfg.NRI.OnPolicyFailure = o.onFailure
	}
	module, ok := builtin.Module(o.policy)
	if !ok {
		t.Fatalf("no built-in policy %q", o.policy)
	}
	log := testLogger()
	met := metrics.New()
	m, err := resmgr.New(context.Background(), cfg, o.topo, resmgr.WasmLoader(o.policy, module, &cfg.Policy, log), resmgr.WithNodeName("node-1"), resmgr.WithLogger(log), resmgr.WithMetrics(met))
	if err != nil {
		t.Fatal(err)
	}
	p, err := nri.New(m, rt.socket, "nriwasm", "90",
		nri.WithBackoff(10*time.Millisecond, 100*time.Millisecond), nri.WithLogger(log), nri.WithMetrics(met), nri.WithDialer(rt.dial))
	if err != nil {
		t.Fatal(err)
	}
	m.SetUpdateSink(p.Send)
	m.Go("nri", p.Run)
	ctx, cancel := context.WithCancel(context.Background())
	a := &agent{m: m, metrics: met, stateDir: o.stateDir, cancel: cancel, done: make(chan error, 1)}
	go func() { a.done <- m.Run(ctx) }()
	t.Cleanup(a.stop)
	return a
}

// stop stops the agent as SIGTERM would; later calls do nothing.
func (a *agent) stop() {
	if a.cancel == nil {
		return
	}
	a.cancel()
	a.cancel = nil
	<-a.done
}

// assignment is what the journal says container id was given.
func (a *agent) assignment(t testing.TB, id string) *abi.ContainerAdjustment {
	t.Helper()
	for _, c := range a.m.Journal().GetContainers() {
		if c.GetId() == id {
			return c.GetAssignment()
		}
	}
	t.Fatalf("container %s is not in the journal", id)
	return nil
}

// counter reads a counter's value from the agent's metrics.
func (a *agent) counter(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := a.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					continue metric
				}
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}

// meanCall is the mean duration of the policy's calls of method.
func (a *agent) meanCall(t testing.TB, method string) time.Duration {
	t.Helper()
	families, err := a.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "nriwasm_policy_call_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" && l.GetValue() == method && m.GetHistogram().GetSampleCount() > 0 {
					h := m.GetHistogram()
					return time.Duration(h.GetSampleSum() / float64(h.GetSampleCount()) * float64(time.Second))
				}
			}
		}
	}
	return 0
}
