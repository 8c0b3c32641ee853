//go:build integration

package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/integration/agent"
	"github.com/nriwasm/nriwasm/integration/containerd"
)

// TestAgentUpdatesContainerStartedAfterSynchronize creates a container
// (without starting it) before the agent runs, so that the agent's first
// Synchronize places it with an update while it is only created. containerd
// records such an update but leaves the cgroup as runc created it; the agent
// must send the update again once the container starts. The container's real
// cgroup cpuset must end up equal to the agent's journal.
func TestAgentUpdatesContainerStartedAfterSynchronize(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	online, err := containerd.OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	c := containerd.Start(t, containerd.Options{})
	po, co := burstable.cri()
	pod, err := c.RunPodSandbox(ctx, po)
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateContainer(ctx, pod, co)
	if err != nil {
		t.Fatal(err)
	}
	a := agent.Start(t, agent.Options{Binary: binary, NRISocket: c.NRISocket})
	var journaled string
	a.Eventually(t, checkTimeout, func() string {
		j, err := a.Journal()
		if err != nil {
			return err.Error()
		}
		ctr, ok := j.Container(id)
		if !ok || ctr.GetAssignment().GetCpusetCpus() == "" {
			return "waiting for the agent to journal the created container's placement"
		}
		journaled = ctr.GetAssignment().GetCpusetCpus()
		return ""
	})
	if sameCPUs(journaled, online) {
		t.Fatalf("the policy placed the container on every online CPU (%q): the test cannot tell a placement from none", journaled)
	}
	if err := c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	// The cgroup converges within moments with the fix; without it it keeps
	// every online CPU for good (no later event repairs it).
	a.Eventually(t, 20*time.Second, func() string {
		cs, allowed, err := c.Affinity(ctx, id)
		if err != nil {
			return err.Error()
		}
		if !sameCPUs(cs, journaled) || !sameCPUs(allowed, journaled) {
			return fmt.Sprintf("journal says cpus %q; cgroup cpuset.cpus %q, Cpus_allowed_list %q", journaled, cs, allowed)
		}
		return ""
	})
	if a.LogCount("sending a started container the update it got before its start") != 1 {
		t.Errorf("the agent did not log the re-sent update once:\n%s", a.StartLog())
	}
}

// TestAgentReconnectsPromptly stops containerd twice (about 4 s and 6.5 s,
// as in issue 16) under the running agent: while it is down the agent says
// so once (an ERROR line, nriwasm_nri_connected 0) and keeps trying at a
// bounded interval; once containerd is back the agent reconnects in well
// under a second. The time from containerd ready to the agent connected is
// logged as a FIGURE; the number of attempts during the outage shows the
// retry interval stayed bounded (with a doubling delay there would be at
// most 7 in 6.5 s).
func TestAgentReconnectsPromptly(t *testing.T) {
	e := newEnv(t, "")
	e.run(t, burstable)
	e.check(t)
	for _, outage := range []time.Duration{4 * time.Second, 6500 * time.Millisecond} {
		m0 := e.metrics(t)
		errors0 := countErrorLines(e.a)
		e.c.Stop(t)
		e.a.Eventually(t, checkTimeout, func() string {
			m, err := e.a.Metrics(e.ctx)
			if err != nil {
				return err.Error()
			}
			if m.Sum("nriwasm_nri_connected") != 0 {
				return "waiting for nriwasm_nri_connected to drop to 0 after containerd stopped"
			}
			return ""
		})
		time.Sleep(outage)
		e.c.Restart(t)
		ready := time.Now()
		var took time.Duration
		e.a.Eventually(t, checkTimeout, func() string {
			m, err := e.a.Metrics(e.ctx)
			if err != nil {
				return err.Error()
			}
			if m.Sum("nriwasm_nri_connected") != 1 {
				return "waiting for nriwasm_nri_connected to be 1 again"
			}
			took = time.Since(ready)
			return ""
		})
		t.Logf("FIGURE containerd ready to agent reconnected after a %v outage: %v", outage, took.Round(time.Millisecond))
		m := e.metrics(t)
		failed := m.Sum("nriwasm_nri_connections_total", "result", "failed") - m0.Sum("nriwasm_nri_connections_total", "result", "failed")
		if least := outage.Seconds() / 0.5 * 0.75; failed < least {
			t.Errorf("%v attempts failed during a %v outage, want at least %.0f (one per 500 ms at most)", failed, outage, least)
		}
		if n := countErrorLines(e.a) - errors0; n > 2 {
			t.Errorf("the agent logged %d ERROR lines during one outage, want at most 2 (the loss and the first failed attempt)", n)
		}
		if e.a.LogCount("DISCONNECTED from the runtime") == 0 {
			t.Error("the agent did not log that it lost the runtime")
		}
	}
	e.check(t)
}

// countErrorLines counts the agent's current start's log lines at ERROR.
func countErrorLines(a *agent.Agent) int {
	return strings.Count(a.StartLog(), "level=ERROR")
}
