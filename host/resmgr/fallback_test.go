package resmgr_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus/testutil"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/state"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// poisoned is the conformance policy with a bug: its Init refuses a restore
// holding a container named "poison", and with syncToo its Synchronize
// refuses one too. adopted records the containers Synchronize received.
type poisoned struct {
	*conformance.Policy
	syncToo bool
	adopted *[]*abi.Container
}

func hasPoison(cs []*abi.Container) bool {
	for _, c := range cs {
		if c.GetName() == "poison" {
			return true
		}
	}
	return false
}

func (p poisoned) Init(r *abi.InitRequest) (*abi.InitResponse, error) {
	if hasPoison(r.GetRestore().GetContainers()) {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "restore.containers", "cannot restore the poison container")
	}
	return p.Policy.Init(r)
}

func (p poisoned) Synchronize(r *abi.SynchronizeRequest) (*abi.SynchronizeResponse, error) {
	if p.syncToo && hasPoison(r.GetContainers()) {
		return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "containers", "cannot adopt the poison container")
	}
	for _, c := range r.GetContainers() {
		*p.adopted = append(*p.adopted, c.CloneVT())
	}
	return p.Policy.Synchronize(r)
}

const degradedHelp = "1 while the policy runs without the journal's full state: restoring it failed, and the instance was started adopting the live containers or fresh (docs/agent.md)."

// poisonedJournal writes a checkpoint holding "good" on 4-5 and "poison" on 6-7.
func poisonedJournal(t *testing.T) (dir string, pod *abi.PodSandbox, live []*abi.Container) {
	t.Helper()
	dir = t.TempDir()
	pod, good := container("good", "4-5")
	_, bad := container("poison", "6-7")
	good.Assignment = &abi.ContainerAdjustment{CpusetCpus: "4-5"}
	bad.Assignment = &abi.ContainerAdjustment{CpusetCpus: "6-7"}
	j := state.FromRestoreState(&abi.RestoreState{Pods: []*abi.PodSandbox{pod}, Containers: []*abi.Container{good, bad}})
	if err := state.NewCheckpoint(dir).Save(j); err != nil {
		t.Fatal(err)
	}
	return dir, pod, []*abi.Container{good, bad}
}

// TestRestoreFallback: a restarted agent whose policy cannot be restored from
// the journal does not exit: it starts the policy adopting the live
// containers through Synchronize (or, if that fails too, fresh), keeps every
// container in the journal with its cpuset, logs an ERROR naming the cause,
// reports itself degraded in readiness and metrics, and serves new
// containers.
func TestRestoreFallback(t *testing.T) {
	tests := []struct {
		name        string
		syncToo     bool
		wantAdopted int
		wantMode    string
	}{
		{"adopted through Synchronize", false, 2, "adopting the live containers"},
		{"Synchronize fails too: fresh", true, 0, "fresh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir, pod, live := poisonedJournal(t)
			var adopted []*abi.Container
			f := newFake(nil)
			f.newPol = func() policy.Policy { return poisoned{&conformance.Policy{}, tt.syncToo, &adopted} }
			var logs bytes.Buffer
			log := funcr.New(func(prefix, args string) { logs.WriteString(prefix + args + "\n") }, funcr.Options{})
			cfg := config.Default()
			cfg.Policy.Name = "conformance"
			cfg.StateDir = dir
			met := metrics.New()
			m, err := resmgr.New(ctx, cfg, testTopology(), f.load, resmgr.WithNodeName("node-1"), resmgr.WithMetrics(met), resmgr.WithLogger(log))
			if err != nil {
				t.Fatalf("New: %v (the agent would exit and crash-loop)", err)
			}
			t.Cleanup(func() { m.Stop() })

			if len(adopted) != tt.wantAdopted {
				t.Fatalf("the new instance adopted %d containers, want %d", len(adopted), tt.wantAdopted)
			}
			for _, c := range adopted {
				if c.GetAssignment().GetCpusetCpus() == "" {
					t.Fatalf("container %s adopted without its assignment", c.GetId())
				}
			}
			if _, err := m.Synchronize(ctx, []*abi.PodSandbox{pod}, live); err != nil {
				t.Fatal(err)
			}
			rs := m.Journal()
			if len(rs.GetContainers()) != 2 {
				t.Fatalf("the journal holds %d containers, want both kept", len(rs.GetContainers()))
			}
			for _, c := range rs.GetContainers() {
				if want := map[string]string{"good": "4-5", "poison": "6-7"}[c.GetId()]; c.GetAssignment().GetCpusetCpus() != want {
					t.Fatalf("container %s has %q in the journal, want %q kept", c.GetId(), c.GetAssignment().GetCpusetCpus(), want)
				}
			}
			if err := m.Ready(); err == nil || !strings.Contains(err.Error(), "degraded") || !strings.Contains(err.Error(), tt.wantMode) {
				t.Fatalf("Ready = %v, want degraded, initialized %s", err, tt.wantMode)
			}
			const want = "# HELP nriwasm_policy_degraded " + degradedHelp + "\n# TYPE nriwasm_policy_degraded gauge\nnriwasm_policy_degraded 1\n"
			if err := testutil.GatherAndCompare(met.Registry, strings.NewReader(want), "nriwasm_policy_degraded"); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), "cannot restore the poison container") {
				t.Fatalf("the log does not name the cause:\n%s", logs.String())
			}
			_, c := container("new", "8-9")
			if adj, _, err := m.CreateContainer(ctx, pod, c); err != nil || adj.GetCpusetCpus() != "8-9" {
				t.Fatalf("CreateContainer while degraded = %v, %v; want 8-9", adj, err)
			}
		})
	}
}

// TestRebuildFallback: a trap mid-run rebuilds the instance from the
// journal; when that restore fails, the same call goes on with an instance
// that adopted the live containers, and the agent is degraded.
func TestRebuildFallback(t *testing.T) {
	ctx := context.Background()
	var adopted []*abi.Container
	f := newFake(nil)
	f.newPol = func() policy.Policy { return poisoned{&conformance.Policy{}, false, &adopted} }
	m := newManager(t, f, nil)
	pod, bad := container("poison", "6-7")
	if _, _, err := m.CreateContainer(ctx, pod, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Synchronize(ctx, []*abi.PodSandbox{pod}, []*abi.Container{bad}); err != nil {
		t.Fatal(err)
	}
	adopted = nil
	if err := m.Ready(); err != nil {
		t.Fatalf("Ready before the trap: %v", err)
	}
	f.traps[abi.Method_METHOD_CREATE_CONTAINER] = 1
	_, c := container("c", "2-3")
	adj, _, err := m.CreateContainer(ctx, pod, c)
	if err != nil || adj.GetCpusetCpus() != "2-3" {
		t.Fatalf("CreateContainer after the trap = %v, %v; want 2-3 from an instance that adopted the live containers", adj, err)
	}
	if len(adopted) != 1 || adopted[0].GetId() != "poison" || adopted[0].GetAssignment().GetCpusetCpus() != "6-7" {
		t.Fatalf("adopted %v, want poison on 6-7", adopted)
	}
	if err := m.Ready(); err == nil || !strings.Contains(err.Error(), "degraded") {
		t.Fatalf("Ready = %v, want degraded", err)
	}
}
