package nri_test

import (
	"testing"

	"github.com/containerd/nri/pkg/api"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

// TestCreateContainer: each QoS class gets its adjustment through NRI, and the
// journal records exactly what the runtime was told.
func TestCreateContainer(t *testing.T) {
	rt := newRuntime(t)
	rt.start()
	a := startAgent(t, rt, agentOpts{})
	rt.waitSync()
	tests := []struct {
		name, qos            string
		request, limit, mem  int64
		wantCPUs, wantNodes  int // exact sizes; 0 means "some"
		wantExclusiveOfOther bool
	}{
		{name: "guaranteed-2cpu", qos: "guaranteed", request: 2000, limit: 2000, mem: 1 << 30, wantCPUs: 2, wantNodes: 1, wantExclusiveOfOther: true},
		{name: "guaranteed-fraction", qos: "guaranteed", request: 1500, limit: 1500, mem: 1 << 30, wantNodes: 1},
		{name: "burstable", qos: "burstable", request: 500, limit: 1000, mem: 1 << 30, wantNodes: 1},
		{name: "besteffort", qos: "besteffort", wantNodes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pod(tt.name, tt.qos)
			if err := rt.runPod(p); err != nil {
				t.Fatal(err)
			}
			c := ctr(p, "c", tt.request, tt.limit, tt.mem)
			resp, err := rt.create(p, c)
			if err != nil {
				t.Fatal(err)
			}
			cpu := resp.GetAdjust().GetLinux().GetResources().GetCpu()
			cpus, mems := parse(t, cpu.GetCpus()), parse(t, cpu.GetMems())
			if cpus.Size() == 0 || (tt.wantCPUs != 0 && cpus.Size() != tt.wantCPUs) {
				t.Errorf("cpus %q: want %d CPUs", cpu.GetCpus(), tt.wantCPUs)
			}
			require(t, mems.Size(), tt.wantNodes, "memory nodes "+cpu.GetMems())
			got := a.assignment(t, c.Id)
			require(t, got.GetCpusetCpus(), cpu.GetCpus(), "journaled cpus")
			require(t, got.GetCpusetMems(), cpu.GetMems(), "journaled mems")
			if tt.wantExclusiveOfOther {
				for _, other := range a.m.Journal().GetContainers() {
					if other.GetId() != c.Id && parse(t, rt.cpus(other.GetId())).Intersects(cpus) {
						t.Errorf("exclusive CPUs %s shared with %s (%s)", cpus, other.GetId(), rt.cpus(other.GetId()))
					}
				}
			}
			requireConsistent(t, rt, a)
		})
	}
	require(t, a.counter(t, "nriwasm_managed_containers", nil), float64(len(tests)), "managed containers")
}

// TestUpdatesForOthers: exclusive grants shrink the shared pool, and the
// containers already there are moved by the updates in the CreateContainer
// reply; stopping the exclusive containers gives the CPUs back through the
// StopContainer reply, and removal leaves nothing in the journal.
func TestUpdatesForOthers(t *testing.T) {
	rt := newRuntime(t)
	rt.start()
	a := startAgent(t, rt, agentOpts{})
	rt.waitSync()

	shared := pod("shared", "burstable")
	if err := rt.runPod(shared); err != nil {
		t.Fatal(err)
	}
	var sharedIDs []string
	for _, name := range []string{"a", "b", "c", "d"} { // enough to sit in every node's pool
		c := ctr(shared, name, 100, 0, 0)
		if _, err := rt.create(shared, c); err != nil {
			t.Fatal(err)
		}
		sharedIDs = append(sharedIDs, c.Id)
	}
	before := map[string]string{}
	for _, id := range sharedIDs {
		before[id] = rt.cpus(id)
	}

	g := pod("exclusive", "guaranteed")
	if err := rt.runPod(g); err != nil {
		t.Fatal(err)
	}
	updated := 0
	var exclusive []*api.Container
	for i := range 8 {
		c := ctr(g, string(rune('a'+i)), 4000, 4000, 1<<30)
		resp, err := rt.create(g, c)
		if err != nil {
			t.Fatal(err)
		}
		updated += len(resp.GetUpdate())
		exclusive = append(exclusive, c)
		requireConsistent(t, rt, a)
	}
	if updated == 0 {
		t.Fatal("no exclusive grant moved a shared container")
	}
	for _, id := range sharedIDs {
		for _, e := range exclusive {
			if parse(t, rt.cpus(id)).Intersects(parse(t, rt.cpus(e.Id))) {
				t.Errorf("shared container %s (%s) overlaps exclusive %s (%s)", id, rt.cpus(id), e.Id, rt.cpus(e.Id))
			}
		}
	}

	for _, e := range exclusive {
		if _, err := rt.stopContainer(e.Id); err != nil {
			t.Fatal(err)
		}
		if err := rt.removeContainer(e.Id); err != nil {
			t.Fatal(err)
		}
	}
	requireConsistent(t, rt, a)
	for _, id := range sharedIDs {
		require(t, rt.cpus(id), before[id], "cpus of "+id+" after the exclusive containers left")
	}
	if err := rt.removePod(g.Id); err != nil {
		t.Fatal(err)
	}
	rs := a.m.Journal()
	require(t, len(rs.GetContainers()), len(sharedIDs), "journaled containers")
	require(t, len(rs.GetPods()), 1, "journaled pods")
}

// TestUpdateContainer: new resources reach the policy and the journal.
func TestUpdateContainer(t *testing.T) {
	rt := newRuntime(t)
	rt.start()
	a := startAgent(t, rt, agentOpts{})
	rt.waitSync()
	p := pod("p", "burstable")
	if err := rt.runPod(p); err != nil {
		t.Fatal(err)
	}
	c := ctr(p, "c", 500, 1000, 1<<30)
	if _, err := rt.create(p, c); err != nil {
		t.Fatal(err)
	}
	res := &api.LinuxResources{Cpu: &api.LinuxCPU{Shares: api.UInt64(2048), Quota: api.Int64(300000), Period: api.UInt64(100000)}}
	if _, err := rt.updateContainer(c.Id, res); err != nil {
		t.Fatal(err)
	}
	for _, jc := range a.m.Journal().GetContainers() {
		if jc.GetId() == c.Id {
			require(t, jc.GetResources().GetCpuRequestMilli(), int64(2000), "journaled request")
			require(t, jc.GetResources().GetCpuLimitMilli(), int64(3000), "journaled limit")
		}
	}
	requireConsistent(t, rt, a)
}

// TestUnsolicitedUpdates: a container removed without being stopped first (as
// after a runtime restart) frees its CPUs in RemoveContainer, which has no
// reply: the updates reach the runtime through UpdateContainers.
func TestUnsolicitedUpdates(t *testing.T) {
	rt := newRuntime(t)
	rt.start()
	a := startAgent(t, rt, agentOpts{})
	rt.waitSync()
	var shared []string
	p := pod("shared", "burstable")
	if err := rt.runPod(p); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		c := ctr(p, name, 100, 0, 0)
		if _, err := rt.create(p, c); err != nil {
			t.Fatal(err)
		}
		shared = append(shared, c.Id)
	}
	before := cpusets(rt, shared)
	g := pod("g", "guaranteed")
	if err := rt.runPod(g); err != nil {
		t.Fatal(err)
	}
	moved := 0
	var exclusive []string
	for i := 0; moved == 0 && i < 8; i++ {
		c := ctr(g, string(rune('a'+i)), 4000, 4000, 1<<30)
		resp, err := rt.create(g, c)
		if err != nil {
			t.Fatal(err)
		}
		moved += len(resp.GetUpdate())
		exclusive = append(exclusive, c.Id)
	}
	if moved == 0 {
		t.Fatal("no exclusive grant moved a shared container")
	}
	for _, id := range exclusive {
		if err := rt.removeContainer(id); err != nil {
			t.Fatal(err)
		}
	}
	rt.waitUnsolicited(1)
	testkit.Eventually(t, "shared containers back on their CPUs", func() bool {
		for id, cpus := range before {
			if rt.cpus(id) != cpus {
				return false
			}
		}
		return true
	})
	requireConsistent(t, rt, a)
}
