package resmgr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/internal/builtintest"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// cacheDir holds the compiled built-in policies for every test of the
// package, so each module compiles once.
var cacheDir string

func TestMain(m *testing.M) {
	builtintest.MainWithCache(m, &cacheDir)
}

// testLog logs to t at verbosity 1.
func testLog(t *testing.T) logr.Logger {
	return testr.NewWithOptions(t, testr.Options{Verbosity: 1})
}

// wasmResolve is the agent's Resolve for tests: a built-in name or a .wasm
// path, loaded with the real Wasm host. loads counts the modules loaded.
type wasmResolve struct {
	t     *testing.T
	mu    sync.Mutex
	loads int
	// wrap, if set, wraps each candidate's Load.
	wrap func(resmgr.LoadFunc) resmgr.LoadFunc
	// natives are policies run natively (fake_test.go), by name.
	natives map[string]func() policy.Policy
}

func (w *wasmResolve) resolve(_ context.Context, cfg *config.Config) (resmgr.Candidate, error) {
	name, module := cfg.Policy.Name, []byte(nil)
	if newPol, ok := w.natives[name]; ok {
		f := newFake(nil)
		f.newPol = newPol
		return resmgr.Candidate{Identity: resmgr.Identity{Reference: name, Name: name}, Load: f.load}, nil
	}
	if strings.HasSuffix(name, ".wasm") {
		data, err := os.ReadFile(name)
		if err != nil {
			return resmgr.Candidate{}, err
		}
		module, name = data, strings.TrimSuffix(filepath.Base(name), ".wasm")
	} else if m, ok := builtin.Module(name); ok {
		module = m
	} else {
		return resmgr.Candidate{}, fmt.Errorf("no policy %q", name)
	}
	w.mu.Lock()
	w.loads++
	w.mu.Unlock()
	pc := cfg.Policy
	load := resmgr.WasmLoader(name, module, &pc, testLog(w.t))
	if w.wrap != nil {
		load = w.wrap(load)
	}
	return resmgr.Candidate{
		Identity:   resmgr.Identity{Reference: cfg.Policy.Name, Name: name, Digest: resmgr.ModuleDigest(module)},
		DriverName: cfg.DRA.DriverName(name),
		Load:       load,
	}, nil
}

// swapAgent is a manager running the built-in topology-aware policy through
// the Wasm host on the Desktop1Socket machine (16 CPUs), with the agent's
// kind of Resolve.
type swapAgent struct {
	m       *resmgr.Manager
	cfg     *config.Config
	res     *wasmResolve
	met     *metrics.Metrics
	mu      sync.Mutex
	updates []*abi.ContainerUpdate // sent to the update sink
}

func newSwapAgent(t *testing.T, policyConfig string) *swapAgent {
	t.Helper()
	return newSwapAgentWith(t, policyConfig, &wasmResolve{t: t})
}

// newSwapAgentWith is newSwapAgent resolving policies with res.
func newSwapAgentWith(t *testing.T, policyConfig string, res *wasmResolve) *swapAgent {
	t.Helper()
	cfg := config.Default()
	cfg.Policy.Name = "topology-aware"
	cfg.Policy.CacheDir = cacheDir
	cfg.Policy.Config = config.RawConfig(policyConfig)
	cfg.Policy.Data = []byte(policyConfig)
	cfg.StateDir = t.TempDir()
	a := &swapAgent{cfg: cfg, res: res, met: metrics.New()}
	cand, err := a.res.resolve(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.m, err = resmgr.New(context.Background(), cfg, policytest.Machine(t, "Desktop1Socket"), cand.Load,
		resmgr.WithNodeName("node-1"), resmgr.WithDriverName(cand.DriverName), resmgr.WithLogger(testLog(t)), resmgr.WithMetrics(a.met),
		resmgr.WithIdentity(cand.Identity), resmgr.WithResolve(a.res.resolve))
	if err != nil {
		t.Fatal(err)
	}
	a.m.SetUpdateSink(func(us []*abi.ContainerUpdate) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.updates = append(a.updates, us...)
	})
	t.Cleanup(func() { a.m.Stop() })
	return a
}

// create creates a container from s and returns its cpuset.
func (a *swapAgent) create(t *testing.T, s policytest.Spec) string {
	t.Helper()
	req := s.Request()
	adj, _, err := a.m.CreateContainer(context.Background(), req.GetPod(), req.GetContainer())
	if err != nil {
		t.Fatal(err)
	}
	if adj.GetCpusetCpus() == "" {
		t.Fatalf("container %s was not placed", s.ID)
	}
	return adj.GetCpusetCpus()
}

// assignments are the journal's cpusets by container id.
func (a *swapAgent) assignments() map[string]string {
	out := map[string]string{}
	for _, c := range a.m.Journal().GetContainers() {
		out[c.GetId()] = c.GetAssignment().GetCpusetCpus() + "/" + c.GetAssignment().GetCpusetMems()
	}
	return out
}

// changed is a copy of the running configuration with edit applied.
func (a *swapAgent) changed(edit func(*config.Config)) *config.Config {
	c := *a.m.Config()
	edit(&c)
	return &c
}

// copyModule writes the built-in topology-aware module to a .wasm file: the
// same policy under another policy.name.
func copyModule(t *testing.T) string {
	module, _ := builtin.Module("topology-aware")
	path := filepath.Join(t.TempDir(), "topology-aware.wasm")
	if err := os.WriteFile(path, module, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mustCounter finds a counter's value through the registry.
func mustCounter(met *metrics.Metrics, name, result string) *counterValue {
	return &counterValue{met: met, name: name, result: result}
}

// counterValue reads one labelled counter from the metrics' registry.
type counterValue struct {
	met          *metrics.Metrics
	name, result string
}

func (c *counterValue) value() float64 {
	mfs, _ := c.met.Registry.Gather()
	for _, mf := range mfs {
		if mf.GetName() != c.name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == c.result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestSwapAccepted: changing policy.name (to the same policy in a file) and
// policy.memoryLimit, which needed a restart, swaps the policy live: the new
// instance is restored from the journal, no container moves, the new
// configuration and identity are in force and recorded, and the new policy
// knows the live containers (its next exclusive grant avoids theirs).
func TestSwapAccepted(t *testing.T) {
	a := newSwapAgent(t, "")
	g1 := a.create(t, policytest.Container("g1", 2000).Guaranteed())
	a.create(t, policytest.Container("b1", 500))
	before := a.assignments()
	path := copyModule(t)

	cfg := a.changed(func(c *config.Config) { c.Policy.Name, c.Policy.MemoryLimit = path, 512<<20 })
	if err := a.m.ApplyConfig(context.Background(), cfg, nil); err != nil {
		t.Fatalf("swap refused: %v", err)
	}
	if got := a.m.Config(); got.Policy.Name != path || got.Policy.MemoryLimit != 512<<20 {
		t.Fatalf("running configuration %s %v, want the new one", got.Policy.Name, got.Policy.MemoryLimit)
	}
	if got := a.assignments(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("assignments changed: %v, were %v", got, before)
	}
	if len(a.updates) != 0 {
		t.Fatalf("updates sent: %v", a.updates)
	}
	if id := a.m.Identity(); id.Reference != path {
		t.Fatalf("identity %v, want reference %s", id, path)
	}
	if rec, ok := resmgr.RecordedIdentity(a.cfg.StateDir); !ok || rec.Reference != path {
		t.Fatalf("recorded identity %v (%v), want reference %s", rec, ok, path)
	}
	if n := mustCounter(a.met, "nriwasm_policy_swaps_total", metrics.SwapAccepted).value(); n != 1 {
		t.Fatalf("swaps accepted %v, want 1", n)
	}
	g2 := a.create(t, policytest.Container("g2", 2000).Guaranteed())
	policytest.CheckDisjoint(t, map[string]cpuset.Set{"g1": policytest.MustSet(t, g1), "g2": policytest.MustSet(t, g2)})
}

// mover is the conformance policy whose Synchronize moves every container
// named "move" to CPUs 14-15: a policy whose restore does not keep every
// live assignment (the built-in policies' restore keeps each container's
// cpuset, adopting one outside their pools as it is).
type mover struct{ conformance.Policy }

func (p *mover) Synchronize(r *abi.SynchronizeRequest) (*abi.SynchronizeResponse, error) {
	var us []*abi.ContainerUpdate
	for _, c := range r.GetContainers() {
		if c.GetName() == "move" {
			us = append(us, &abi.ContainerUpdate{ContainerId: c.GetId(), CpusetCpus: "14-15"})
		}
	}
	return &abi.SynchronizeResponse{Updates: us}, nil
}

// moverChange swaps to the mover policy (run natively) with
// policy.swap.maxMoves set.
func moverChange(a *swapAgent, maxMoves int) *config.Config {
	a.res.natives = map[string]func() policy.Policy{"mover": func() policy.Policy { return &mover{} }}
	return a.changed(func(c *config.Config) {
		c.Policy.Name = "mover"
		c.Policy.Swap.MaxMoves = maxMoves
	})
}

// TestSwapRefused: a swap whose restore would move a live container is
// refused with policy.swap.maxMoves 0: the error names the container and
// its move, the old policy and configuration stay, nothing moves.
func TestSwapRefused(t *testing.T) {
	a := newSwapAgent(t, "")
	a.create(t, policytest.Container("g1", 2000).Guaranteed())
	a.create(t, policytest.Container("b1", 500).Named("move"))
	before, old := a.assignments(), a.m.Identity()

	err := a.m.ApplyConfig(context.Background(), moverChange(a, 0), nil)
	var refused *resmgr.SwapRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("swap not refused: %v", err)
	}
	if len(refused.Moves) != 1 || refused.Moves[0].ID != "b1" || !strings.Contains(err.Error(), `default/pod-b1/move (b1): cpus "2-8,10-15" → "14-15"`) {
		t.Fatalf("refusal names %v: %v", refused.Moves, err)
	}
	if a.m.Identity() != old || a.m.Config().Policy.Name != "topology-aware" {
		t.Fatalf("policy changed to %v", a.m.Identity())
	}
	if got := a.assignments(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("assignments changed: %v, were %v", got, before)
	}
	if n := mustCounter(a.met, "nriwasm_policy_swaps_total", metrics.SwapRefused).value(); n != 1 {
		t.Fatalf("swaps refused %v, want 1", n)
	}
	if n := mustCounter(a.met, "nriwasm_config_reloads_total", metrics.ReloadRejected).value(); n != 1 {
		t.Fatalf("reloads rejected %v, want 1", n)
	}
	// The old policy serves on: its next grant is disjoint from g1's.
	a.create(t, policytest.Container("g2", 2000).Guaranteed())
}

// TestSwapMaxMoves: with policy.swap.maxMoves 1 the same swap is accepted;
// the one container that moves is updated in the journal and sent to the
// runtime, the other keeps its CPUs.
func TestSwapMaxMoves(t *testing.T) {
	a := newSwapAgent(t, "")
	g1 := a.create(t, policytest.Container("g1", 2000).Guaranteed())
	b1 := a.create(t, policytest.Container("b1", 500).Named("move"))
	if err := a.m.ApplyConfig(context.Background(), moverChange(a, 1), nil); err != nil {
		t.Fatalf("swap refused: %v", err)
	}
	if len(a.updates) != 1 || a.updates[0].GetContainerId() != "b1" || a.updates[0].GetCpusetCpus() == b1 {
		t.Fatalf("updates sent %v, want b1 moved off %s", a.updates, b1)
	}
	got := a.assignments()
	if !strings.HasPrefix(got["g1"], g1+"/") || !strings.HasPrefix(got["b1"], a.updates[0].GetCpusetCpus()+"/") {
		t.Fatalf("journal %v: g1 should keep %s, b1 have %s", got, g1, a.updates[0].GetCpusetCpus())
	}
	if got["b1"] != "14-15/0" {
		t.Fatalf("b1 journaled on %s, want the mover's 14-15", got["b1"])
	}
	if a.m.Identity().Name != "mover" {
		t.Fatalf("running %v, want the mover", a.m.Identity())
	}
}

// TestSwapDuringEvents: containers created while the new policy loads are
// answered once, by the old policy, and the new one is restored with them
// under the lock: none is lost (the new policy's grants avoid theirs), none
// is answered again (no update for them), and each appears once in the
// journal.
func TestSwapDuringEvents(t *testing.T) {
	a := newSwapAgent(t, "")
	held := map[string]cpuset.Set{"g0": policytest.MustSet(t, a.create(t, policytest.Container("g0", 2000).Guaranteed()))}
	loaded, proceed := make(chan struct{}), make(chan struct{})
	a.res.wrap = func(load resmgr.LoadFunc) resmgr.LoadFunc {
		return func(ctx context.Context, restore wasm.RestoreFunc) (resmgr.Policy, error) {
			p, err := load(ctx, restore)
			close(loaded)
			<-proceed
			return p, err
		}
	}
	done := make(chan error, 1)
	go func() {
		done <- a.m.ApplyConfig(context.Background(), a.changed(func(c *config.Config) { c.Policy.Name = copyModule(t) }), nil)
	}()
	<-loaded
	// The new policy is loaded and restored from the journal's copy; these
	// are served by the old one meanwhile, two of them racing the switch.
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("g%d", i)
		if i == 3 {
			close(proceed)
		}
		wg.Go(func() {
			s := a.create(t, policytest.Container(id, 2000).Guaranteed())
			mu.Lock()
			defer mu.Unlock()
			held[id] = policytest.MustSet(t, s)
		})
		if i == 1 {
			wg.Wait()
		}
	}
	wg.Wait()
	if err := <-done; err != nil {
		t.Fatalf("swap refused: %v", err)
	}
	if len(a.updates) != 0 {
		t.Fatalf("containers answered again through updates: %v", a.updates)
	}
	seen := map[string]int{}
	for _, c := range a.m.Journal().GetContainers() {
		seen[c.GetId()]++
	}
	for id := range held {
		if seen[id] != 1 {
			t.Fatalf("container %s journaled %d times", id, seen[id])
		}
	}
	held["g4"] = policytest.MustSet(t, a.create(t, policytest.Container("g4", 2000).Guaranteed()))
	policytest.CheckDisjoint(t, held)
}

// TestSwapConfigRefusedLive: a topology-aware configuration its Reconfigure
// refuses (the new reserved CPUs hold a container's exclusive CPUs), which
// took a restart to apply, is applied by a swap: a new instance restores the
// journal under the new configuration, nothing moves, and the new
// configuration is in force.
func TestSwapConfigRefusedLive(t *testing.T) {
	a := newSwapAgent(t, "")
	g1 := a.create(t, policytest.Container("g1", 2000).Guaranteed())
	before := a.assignments()
	newConfig := `{"reservedResources":{"cpu":"cpuset:` + g1 + `"}}`
	cfg := a.changed(func(c *config.Config) {
		c.Policy.Config, c.Policy.Data = config.RawConfig(newConfig), []byte(newConfig)
	})
	if err := a.m.ApplyConfig(context.Background(), cfg, nil); err != nil {
		t.Fatalf("configuration refused: %v", err)
	}
	if got := string(a.m.Config().Policy.Data); got != newConfig {
		t.Fatalf("running policy configuration %s, want %s", got, newConfig)
	}
	if got := a.assignments(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("assignments changed: %v, were %v", got, before)
	}
	if n := mustCounter(a.met, "nriwasm_policy_swaps_total", metrics.SwapAccepted).value(); n != 1 {
		t.Fatalf("swaps accepted %v, want 1", n)
	}
}

// exchanges is an Observer that keeps the methods it was shown.
type exchanges struct {
	mu      sync.Mutex
	methods []abi.Method
}

func (x *exchanges) Observe(e *resmgr.Exchange) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.methods = append(x.methods, e.Method)
}

// TestSwapKeepsObservers: an observer (the shadow policy, the record) added
// before a swap receives the new policy's exchanges after it.
func TestSwapKeepsObservers(t *testing.T) {
	a := newSwapAgent(t, "")
	x := &exchanges{}
	a.m.AddObserver(x)
	if err := a.m.ApplyConfig(context.Background(), moverChange(a, 0), nil); err != nil {
		t.Fatalf("swap refused: %v", err)
	}
	req := policytest.Container("c1", 100).Request()
	if _, _, err := a.m.CreateContainer(context.Background(), req.GetPod(), req.GetContainer()); err != nil {
		t.Fatal(err)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.methods) != 1 || x.methods[0] != abi.Method_METHOD_CREATE_CONTAINER {
		t.Fatalf("the observer saw %v after the swap, want the CreateContainer", x.methods)
	}
}

// TestSwapKeepsPreparedClaims: a configuration that moves the reserved CPUs
// onto a prepared claim's CPU is refused live (the claim cannot move) and
// must not reach the node through a swap either: the new instance would take
// the claim back unaccounted and hand its CPU to others. The swap fails, the
// running configuration stays, and the claim's CPU is still the claim's: the
// next exclusive grant avoids it.
//
// The policy runs natively (the same Go code as its .wasm) so that the test
// follows the policy's source before the .wasm is rebuilt; the agent's soak
// (integration/soak) runs the same through the module.
func TestSwapKeepsPreparedClaims(t *testing.T) {
	const base = `{"dra":{"enabled":true}}`
	a := newSwapAgentWith(t, base, &wasmResolve{t: t, natives: map[string]func() policy.Policy{
		"topology-aware": func() policy.Policy { return topologyaware.New() },
	}})
	ctx := context.Background()
	if _, err := a.m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	claim := &abi.Claim{Uid: "u1", Namespace: "default", Name: "claim-u1", Results: []*abi.DeviceAllocation{{
		Request: "cpus", Pool: "node-1", Device: "cpudevnuma000", ConsumedCapacity: map[string]string{"dra.cpu/cpu": "1"},
	}}}
	resp, err := a.m.PrepareClaim(ctx, claim, func(*abi.AllocateResponse) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		CPUSet string `json:"cpuset"`
	}
	if err := json.Unmarshal(resp.GetDevices()[0].GetStatus().GetData(), &status); err != nil || status.CPUSet == "" {
		t.Fatalf("claim status %s: %v", resp.GetDevices()[0].GetStatus().GetData(), err)
	}
	newConfig := `{"dra":{"enabled":true},"reservedResources":{"cpu":"cpuset:` + status.CPUSet + `"}}`
	cfg := a.changed(func(c *config.Config) {
		c.Policy.Config, c.Policy.Data = config.RawConfig(newConfig), []byte(newConfig)
	})
	err = a.m.ApplyConfig(ctx, cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "claim u1") {
		t.Fatalf("configuration that takes claim u1's CPU %s: %v, want a refusal naming the claim", status.CPUSet, err)
	}
	if got := string(a.m.Config().Policy.Data); got != base {
		t.Fatalf("running policy configuration %s, want %s", got, base)
	}
	if n := mustCounter(a.met, "nriwasm_policy_swaps_total", metrics.SwapAccepted).value(); n != 0 {
		t.Fatalf("swaps accepted %v, want 0", n)
	}
	for i := range 15 {
		id := fmt.Sprintf("g%d", i)
		req := policytest.Container(id, 1000).Guaranteed().Request()
		adj, _, err := a.m.CreateContainer(ctx, req.GetPod(), req.GetContainer())
		if err != nil {
			break
		}
		if adj.GetCpusetCpus() == status.CPUSet {
			t.Fatalf("container %s was given claim u1's CPU %s", id, status.CPUSet)
		}
	}
}
