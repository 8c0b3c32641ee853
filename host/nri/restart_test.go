package nri_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/nri/pkg/api"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/state"
)

// populate runs a shared pod with two containers and a Guaranteed pod with
// two exclusive ones, and returns every container's cpuset.
func populate(t *testing.T, rt *fakeRuntime) map[string]string {
	t.Helper()
	shared, g := pod("shared", "burstable"), pod("exclusive", "guaranteed")
	var ids []string
	for _, p := range []*api.PodSandbox{shared, g} {
		if err := rt.runPod(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*api.Container{
		ctr(shared, "a", 200, 0, 0), ctr(shared, "b", 300, 1000, 0),
		ctr(g, "x", 2000, 2000, 1<<30), ctr(g, "y", 4000, 4000, 1<<30),
	} {
		p := shared
		if c.PodSandboxId == g.Id {
			p = g
		}
		if _, err := rt.create(p, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.Id)
	}
	return cpusets(rt, ids)
}

func cpusets(rt *fakeRuntime, ids []string) map[string]string {
	out := map[string]string{}
	for _, id := range ids {
		out[id] = rt.cpus(id)
	}
	return out
}

func requireSameCPUs(t *testing.T, rt *fakeRuntime, want map[string]string) {
	t.Helper()
	for id, cpus := range want {
		require(t, rt.cpus(id), cpus, "cpus of "+id)
	}
}

// TestRestarts: after the runtime restarts, or the agent restarts (with its
// checkpoint), the agent reconnects, resynchronizes and keeps every
// container's assignment; nothing is reshuffled.
func TestRestarts(t *testing.T) {
	tests := []struct {
		name    string
		restart func(t *testing.T, rt *fakeRuntime, a *agent) *agent
	}{
		{"runtime", func(t *testing.T, rt *fakeRuntime, a *agent) *agent {
			rt.stop()
			rt.start()
			return a
		}},
		{"agent", func(t *testing.T, rt *fakeRuntime, a *agent) *agent {
			a.stop()
			return startAgent(t, rt, agentOpts{stateDir: a.stateDir})
		}},
		{"both", func(t *testing.T, rt *fakeRuntime, a *agent) *agent {
			a.stop()
			rt.stop()
			rt.start()
			return startAgent(t, rt, agentOpts{stateDir: a.stateDir})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			rt.start()
			a := startAgent(t, rt, agentOpts{})
			rt.waitSync()
			want := populate(t, rt)
			journal := a.m.Journal()

			a = tt.restart(t, rt, a)
			rt.waitSync()
			requireSameCPUs(t, rt, want)
			requireConsistent(t, rt, a)
			got := a.m.Journal()
			require(t, len(got.GetContainers()), len(journal.GetContainers()), "journaled containers")
			for i, c := range got.GetContainers() {
				require(t, c.GetAssignment().GetCpusetCpus(), journal.GetContainers()[i].GetAssignment().GetCpusetCpus(), "assignment of "+c.GetId())
			}
			if err := a.m.Ready(); err != nil {
				t.Fatal(err)
			}
			// The policy knows the old containers: a new exclusive one does not take their CPUs.
			g := pod("after", "guaranteed")
			if err := rt.runPod(g); err != nil {
				t.Fatal(err)
			}
			c := ctr(g, "z", 2000, 2000, 1<<30)
			if _, err := rt.create(g, c); err != nil {
				t.Fatal(err)
			}
			for id, cpus := range want {
				if strings.HasPrefix(id, "exclusive") && parse(t, rt.cpus(c.Id)).Intersects(parse(t, cpus)) {
					t.Errorf("new exclusive container got %s, overlapping %s's %s", rt.cpus(c.Id), id, cpus)
				}
			}
		})
	}
}

// TestSynchronizeWithCheckpoint: the runtime reports containers the
// checkpoint knows (they keep their assignments), one it does not (placed),
// and the checkpoint holds one the runtime no longer runs (forgotten).
func TestSynchronizeWithCheckpoint(t *testing.T) {
	dir := t.TempDir()
	j := state.New()
	p := pod("p", "guaranteed")
	j.AddPod(&abi.PodSandbox{Id: p.Id, Name: p.Name, Namespace: p.Namespace, QosClass: abi.QOSClass_QOS_CLASS_GUARANTEED})
	known := ctr(p, "known", 2000, 2000, 1<<30)
	j.AddContainer(&abi.Container{Id: known.Id, PodSandboxId: p.Id, Name: "known", QosClass: abi.QOSClass_QOS_CLASS_GUARANTEED,
		Resources: &abi.Resources{CpuRequestMilli: 2000, CpuLimitMilli: 2000, MemoryLimitBytes: 1 << 30}},
		&abi.ContainerAdjustment{CpusetCpus: "5,53", CpusetMems: "1"})
	j.AddContainer(&abi.Container{Id: "gone", PodSandboxId: p.Id, Name: "gone"}, &abi.ContainerAdjustment{CpusetCpus: "7,55"})
	if err := state.NewCheckpoint(dir).Save(j); err != nil {
		t.Fatal(err)
	}

	rt := newRuntime(t)
	setCPUs(known, "5,53", "1")
	known.State = api.ContainerState_CONTAINER_RUNNING
	fresh := ctr(p, "fresh", 1000, 1000, 1<<30)
	fresh.State = api.ContainerState_CONTAINER_RUNNING
	rt.pods[p.Id] = p
	rt.ctrs[known.Id], rt.ctrs[fresh.Id] = known, fresh
	rt.start()
	a := startAgent(t, rt, agentOpts{stateDir: dir})
	updates := rt.waitSync()

	require(t, rt.cpus(known.Id), "5,53", "known container's cpus")
	require(t, a.assignment(t, known.Id).GetCpusetCpus(), "5,53", "known container's assignment")
	for _, c := range a.m.Journal().GetContainers() {
		if c.GetId() == "gone" {
			t.Error("the container the runtime no longer runs is still journaled")
		}
	}
	placed := false
	for _, u := range updates {
		placed = placed || u.GetContainerId() == fresh.Id
		if u.GetContainerId() == known.Id {
			t.Errorf("the known container was moved: %v", u)
		}
	}
	if !placed {
		t.Errorf("the unknown container was not placed: updates %v", updates)
	}
	requireConsistent(t, rt, a)
}

// TestCorruptCheckpoint: the agent sets a corrupt checkpoint aside and starts
// from what the runtime reports; it does not fail.
func TestCorruptCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, state.FileName), []byte("garbage, not a checkpoint"), 0o600); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t)
	p := pod("p", "burstable")
	c := ctr(p, "c", 500, 0, 0)
	c.State = api.ContainerState_CONTAINER_RUNNING
	rt.pods[p.Id], rt.ctrs[c.Id] = p, c
	rt.start()
	a := startAgent(t, rt, agentOpts{stateDir: dir})
	rt.waitSync()
	if err := a.m.Ready(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "checkpoint.corrupt-1")); err != nil {
		t.Errorf("corrupt checkpoint not set aside: %v", err)
	}
	require(t, len(a.m.Journal().GetContainers()), 1, "journaled containers")
	a.stop()
	j, err := state.Load(dir) // the agent saved a good checkpoint again
	if err != nil {
		t.Fatal(err)
	}
	require(t, j.Counts().Containers, 1, "checkpointed containers")
}
