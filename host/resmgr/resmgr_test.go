package resmgr_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/state"
	"github.com/nriwasm/nriwasm/internal/testkit"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
)

// testTopology has CPUs 0-7 on node 0 and 8-15 on node 1 (with memory), and
// a memoryless node 2.
func testTopology() *abi.Topology {
	t := &abi.Topology{}
	for id := range uint32(16) {
		t.Cpus = append(t.Cpus, &abi.CPU{Id: id, NumaNode: id / 8})
	}
	t.NumaNodes = []*abi.NUMANode{{Id: 0, MemoryBytes: 1 << 30}, {Id: 1, MemoryBytes: 1 << 30}, {Id: 2}}
	return t
}

func newManager(t *testing.T, f *fakePolicy, mutate func(*config.Config)) *resmgr.Manager {
	t.Helper()
	cfg := config.Default()
	cfg.Policy.Name = "conformance"
	cfg.StateDir = t.TempDir()
	if mutate != nil {
		mutate(cfg)
	}
	m, err := resmgr.New(context.Background(), cfg, testTopology(), f.load, resmgr.WithNodeName("node-1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	return m
}

func container(id, cpus string) (*abi.PodSandbox, *abi.Container) {
	return &abi.PodSandbox{Id: "pod", Name: "pod", Namespace: "ns"},
		&abi.Container{Id: id, PodSandboxId: "pod", Name: id, Annotations: map[string]string{conformance.CPUSetAnnotation: cpus}}
}

// TestRetry: a call that fails in the runtime is retried once on an instance
// rebuilt from the journal; a second failure is the call's failure.
func TestRetry(t *testing.T) {
	tests := []struct {
		name     string
		traps    int
		wantCPUs string // "" for unpinned (fail-open)
	}{
		{"one trap: the retry succeeds", 1, "2-3"},
		{"two traps: fail-open", 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(nil)
			m := newManager(t, f, nil)
			pod, first := container("first", "0-1")
			if _, _, err := m.CreateContainer(context.Background(), pod, first); err != nil {
				t.Fatal(err)
			}
			pod, c := container("c", "2-3")
			f.traps[abi.Method_METHOD_CREATE_CONTAINER] = tt.traps
			adj, _, err := m.CreateContainer(context.Background(), pod, c)
			if err != nil {
				t.Fatal(err)
			}
			if adj.GetCpusetCpus() != tt.wantCPUs {
				t.Fatalf("cpus %q, want %q", adj.GetCpusetCpus(), tt.wantCPUs)
			}
			last := f.inits[len(f.inits)-1]
			if len(last.GetRestore().GetContainers()) == 0 || last.GetNodeName() != "node-1" || last.GetTopology() == nil {
				t.Fatalf("the rebuilt instance was not restored from the journal: %v", last)
			}
		})
	}
}

// TestValidation: answers out of bounds are refused whole.
func TestValidation(t *testing.T) {
	tests := []struct {
		cpus    string
		wantErr bool
	}{
		{"0-15", false},
		{"16", true},    // not online
		{"0-3,x", true}, // not a list
	}
	for _, tt := range tests {
		t.Run(tt.cpus, func(t *testing.T) {
			m := newManager(t, newFake(nil), func(c *config.Config) { c.NRI.OnPolicyFailure = config.FailClosed })
			pod, c := container("c", tt.cpus)
			_, _, err := m.CreateContainer(context.Background(), pod, c)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			_, journaled := state.FromRestoreState(m.Journal()).Container("c")
			if journaled == tt.wantErr {
				t.Fatalf("journaled = %v after err = %v", journaled, err)
			}
		})
	}
}

// TestApplyConfig: a policy configuration is applied live; one the policy
// rejects, or a change that needs a restart, leaves the running one.
func TestApplyConfig(t *testing.T) {
	f := newFake(nil)
	m := newManager(t, f, nil)
	running := m.Config()
	with := func(mutate func(*config.Config)) *config.Config {
		c := *running
		mutate(&c)
		return &c
	}
	tests := []struct {
		name    string
		cfg     *config.Config
		loadErr error
		wantErr bool
		applied bool
	}{
		{"policy config", with(func(c *config.Config) { c.Policy.Data = []byte("tuned") }), nil, false, true},
		{"policy config turning DRA on", with(func(c *config.Config) { c.Policy.Data = []byte("dra") }), nil, true, false},
		{"rejected by the policy", with(func(c *config.Config) { c.Policy.Data = []byte("reject") }), nil, true, false},
		{"restart required", with(func(c *config.Config) { c.NRI.SocketPath = "/elsewhere"; c.Policy.Data = []byte("x") }), nil, true, false},
		{"file does not load", nil, errors.New("config x: policy.name: required"), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := m.Config()
			err := m.ApplyConfig(context.Background(), tt.cfg, tt.loadErr)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got := m.Config(); (got == tt.cfg) != tt.applied || (!tt.applied && got != before) {
				t.Fatalf("running config changed = %v, want %v", got != before, tt.applied)
			}
			if tt.name == "policy config turning DRA on" && (!strings.Contains(err.Error(), "restart the agent") || !errors.Is(err, resmgr.ErrRestartRequired)) {
				t.Errorf("err = %v, want it to ask for a restart and wrap ErrRestartRequired", err)
			}
			if tt.name == "restart required" {
				var re *config.RestartError
				if !errors.As(err, &re) {
					t.Fatalf("err = %v, want a *config.RestartError", err)
				}
			}
		})
	}
	// A rebuilt instance gets the applied configuration.
	f.traps[abi.Method_METHOD_CREATE_CONTAINER] = 1
	pod, c := container("c", "1")
	if _, _, err := m.CreateContainer(context.Background(), pod, c); err != nil {
		t.Fatal(err)
	}
	if got := string(f.inits[len(f.inits)-1].GetConfig()); got != "tuned" {
		t.Fatalf("rebuilt instance configured with %q, want the applied \"tuned\"", got)
	}
}

// TestCheckpoint: Stop saves the journal; a new manager restores it and hands
// it to the policy's Init.
func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, newFake(nil), func(c *config.Config) { c.StateDir = dir })
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	pod, c := container("c", "4-5")
	if _, err := m.RunPodSandbox(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.CreateContainer(context.Background(), pod, c); err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	f := newFake(nil)
	newManager(t, f, func(c *config.Config) { c.StateDir = dir })
	rs := f.inits[0].GetRestore()
	if len(rs.GetContainers()) != 1 || rs.GetContainers()[0].GetAssignment().GetCpusetCpus() != "4-5" || len(rs.GetPods()) != 1 {
		t.Fatalf("restored %v", rs)
	}
}

// TestShutdown: a component's failure shuts the manager down with its error.
func TestShutdown(t *testing.T) {
	m := newManager(t, newFake(nil), nil)
	boom := errors.New("boom")
	m.Go("failing", func(context.Context) error { return boom })
	m.Go("waiting", func(ctx context.Context) error { <-ctx.Done(); return nil })
	err := m.Run(context.Background())
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the component's error", err)
	}
}

// TestCreateContainerIsOnDiskBeforeTheAnswer: the placement CreateContainer
// answers is in the checkpoint on disk when the answer leaves, so a kill -9
// right after it loses nothing (the background saver waits 50 ms and, here,
// never runs: the manager is not started).
func TestCreateContainerIsOnDiskBeforeTheAnswer(t *testing.T) {
	var dir string
	m := newManager(t, newFake(nil), func(c *config.Config) { dir = c.StateDir })
	ctx := context.Background()
	if _, err := m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	pod, c := container("c1", "2-3")
	if _, err := m.RunPodSandbox(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
		t.Fatal(err)
	}
	j, err := state.NewCheckpoint(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := j.Container("c1")
	if !ok || got.GetAssignment().GetCpusetCpus() != "2-3" {
		t.Fatalf("checkpoint on disk right after the answer: container c1 %v, assignment %v; want cpus 2-3", ok, got.GetAssignment())
	}
}

// TestDecisionsAfterASaveSurviveAKill: after a full save (here Stop's), the
// next placement reaches the disk as a decision-log record, not a rewrite of
// the checkpoint, and a process killed right after the answer restores both
// placements: the checkpoint's and the log's.
func TestDecisionsAfterASaveSurviveAKill(t *testing.T) {
	var dir string
	m := newManager(t, newFake(nil), func(c *config.Config) { dir = c.StateDir })
	ctx := context.Background()
	if _, err := m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	pod, c1 := container("c1", "2-3")
	if _, err := m.RunPodSandbox(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.CreateContainer(ctx, pod, c1); err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	ck := state.NewCheckpoint(dir)
	saved, err := os.ReadFile(ck.Path())
	if err != nil {
		t.Fatal(err)
	}

	m2 := newManager(t, newFake(nil), func(c *config.Config) { c.StateDir = dir })
	if _, err := m2.Synchronize(ctx, []*abi.PodSandbox{pod}, []*abi.Container{c1}); err != nil {
		t.Fatal(err)
	}
	_, c2 := container("c2", "4-5")
	if _, _, err := m2.CreateContainer(ctx, pod, c2); err != nil {
		t.Fatal(err)
	}
	restoredAfterKill(t, ck, saved, map[string]string{"c1": "2-3", "c2": "4-5"})
}

// restoredAfterKill checks what an agent killed right after its answers
// leaves: the checkpoint file still saved (the decisions are in the log), and
// the checkpoint with its log restoring every container in want with its
// cpuset.
func restoredAfterKill(t *testing.T, ck *state.Checkpoint, saved []byte, want map[string]string) {
	t.Helper()
	if now, err := os.ReadFile(ck.Path()); err != nil || !bytes.Equal(now, saved) {
		t.Fatalf("checkpoint rewritten before the answer (%v): the decisions belong in the log", err)
	}
	j, err := ck.Load()
	if err != nil {
		t.Fatal(err)
	}
	for id, cpus := range want {
		got, ok := j.Container(id)
		if !ok || got.GetAssignment().GetCpusetCpus() != cpus {
			t.Fatalf("restored after the kill: container %s %v, assignment %v; want cpus %s", id, ok, got.GetAssignment(), cpus)
		}
	}
}

// TestPreexistingPodForgottenWithItsLastContainer: a pod the runtime
// reported at Synchronize (it predates the connection, so no pod events
// will come for it) leaves the journal, and nriwasm_managed_pods, with its
// last container; a pod announced by RunPodSandbox waits for its removal.
func TestPreexistingPodForgottenWithItsLastContainer(t *testing.T) {
	m := newManager(t, newFake(nil), nil)
	ctx := context.Background()
	old := &abi.PodSandbox{Id: "old", Name: "old", Namespace: "ns"}
	ctrs := []*abi.Container{
		{Id: "a", PodSandboxId: "old", Name: "a", State: abi.ContainerState_CONTAINER_STATE_RUNNING},
		{Id: "b", PodSandboxId: "old", Name: "b", State: abi.ContainerState_CONTAINER_STATE_RUNNING},
	}
	if _, err := m.Synchronize(ctx, []*abi.PodSandbox{old}, ctrs); err != nil {
		t.Fatal(err)
	}
	pod, c := container("new1", "2-3")
	if _, err := m.RunPodSandbox(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
		t.Fatal(err)
	}
	pods := func() []string {
		var ids []string
		for _, p := range m.Journal().GetPods() {
			ids = append(ids, p.GetId())
		}
		return ids
	}
	if _, err := m.RemoveContainer(ctx, old, ctrs[0]); err != nil {
		t.Fatal(err)
	}
	if got := pods(); len(got) != 2 {
		t.Fatalf("after removing one of two containers: pods %q, want old and pod", got)
	}
	if _, err := m.RemoveContainer(ctx, old, ctrs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RemoveContainer(ctx, pod, c); err != nil {
		t.Fatal(err)
	}
	if got := pods(); len(got) != 1 || got[0] != "pod" {
		t.Fatalf("after removing every container: pods %q, want only the announced pod", got)
	}
}

// TestOptionsRefuseBadValues: a missing input or a bad option value is New's
// error, naming it and its limit, instead of a default kept silently.
func TestOptionsRefuseBadValues(t *testing.T) {
	cfg := config.Default()
	cfg.Policy.Name, cfg.StateDir = "conformance", t.TempDir()
	load := newFake(nil).load
	for _, tc := range []struct {
		name string
		cfg  *config.Config
		topo *abi.Topology
		load resmgr.LoadFunc
		opt  resmgr.Option
		want string
	}{
		{"no config", nil, testTopology(), load, resmgr.WithNodeName("n"), "configuration: nil"},
		{"no topology", cfg, nil, load, resmgr.WithNodeName("n"), "topology: nil"},
		{"no load", cfg, testTopology(), nil, resmgr.WithNodeName("n"), "load: nil"},
		{"no CPUs", cfg, testTopology(), load, resmgr.WithAvailableCPUs([]uint32{}), "available CPUs: empty: must name at least one CPU"},
		{"nil metrics", cfg, testTopology(), load, resmgr.WithMetrics(nil), "metrics: nil"},
		{"no reference", cfg, testTopology(), load, resmgr.WithIdentity(resmgr.Identity{Name: "x"}), "reference is required"},
		{"nil resolve", cfg, testTopology(), load, resmgr.WithResolve(nil), "resolve: nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := resmgr.New(context.Background(), tc.cfg, tc.topo, tc.load, tc.opt)
			if err == nil {
				m.Stop()
				t.Fatalf("New succeeded; want an error with %q", tc.want)
			}
			testkit.ErrorContains(t, err, tc.want)
		})
	}
}

// TestRestartKeepsThePolicyRecord: a restart with the policy the record
// names leaves the record as it is (no synced write on the start's path);
// another policy is recorded.
func TestRestartKeepsThePolicyRecord(t *testing.T) {
	cfg := config.Default()
	cfg.Policy.Name = "conformance"
	cfg.StateDir = t.TempDir()
	record := filepath.Join(cfg.StateDir, state.PolicyFileName)
	start := func(id resmgr.Identity) os.FileInfo {
		t.Helper()
		m, err := resmgr.New(context.Background(), cfg, testTopology(), newFake(nil).load, resmgr.WithNodeName("node-1"), resmgr.WithIdentity(id))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Stop(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(record)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	first := resmgr.Identity{Reference: "conformance", Name: "conformance", Digest: "sha256:1"}
	written := start(first)
	if again := start(first); !os.SameFile(written, again) {
		t.Fatal("a restart with the recorded policy wrote the record again")
	}
	other := resmgr.Identity{Reference: "conformance", Name: "conformance", Digest: "sha256:2"}
	if again := start(other); os.SameFile(written, again) {
		t.Fatal("another policy was not recorded")
	}
	if rec, ok := resmgr.RecordedIdentity(cfg.StateDir); !ok || rec != other {
		t.Fatalf("recorded %v (%v), want %v", rec, ok, other)
	}
}
