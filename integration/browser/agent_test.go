//go:build integration && browser

package browser_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/integration/agent"
	"github.com/nriwasm/nriwasm/integration/containerd"
)

// TestAgentLiveMap runs the agent against a real containerd with the
// conformance policy, pins two containers to different CPUs, and opens the
// agent's /debug/cpus in Chromium: the page renders without a console error
// and draws each container on the CPUs of its real cgroup; `nriwasm status`
// prints the same map from the command line.
func TestAgentLiveMap(t *testing.T) {
	ids := agent.OnlineCPUs(t, 2).Sorted()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n := agent.StartNode(t, containerd.Options{}, agent.Options{Binary: binary, Policy: "conformance"})
	c, a := n.Containerd, n.Agent
	want := map[string]string{ // namespace/pod/container → the CPU the annotation asks for
		"default/first/c":  fmt.Sprint(ids[0]),
		"default/second/c": fmt.Sprint(ids[len(ids)-1]),
	}
	containers := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(want)) {
		pod, err := c.RunPodSandbox(ctx, containerd.PodOptions{Name: strings.Split(key, "/")[1]})
		if err != nil {
			t.Fatal(err)
		}
		id, err := c.RunContainer(ctx, pod, containerd.ContainerOptions{Annotations: map[string]string{"conformance.nriwasm.io/cpuset": want[key]}})
		if err != nil {
			t.Fatal(err)
		}
		containers[key] = id
	}
	real := map[string]string{}
	a.Eventually(t, 90*time.Second, func() string {
		for key, id := range containers {
			set, err := c.CPUSet(ctx, id)
			if err != nil {
				return err.Error()
			}
			if set != want[key] {
				return fmt.Sprintf("%s: cgroup cpuset %q, the policy asked for %q", key, set, want[key])
			}
			real[key] = set
		}
		return ""
	})

	p, problems := open(t, a.MetricsURL+"/debug/cpus")
	if len(problems) > 0 {
		t.Errorf("the page logged:\n\t%s", strings.Join(problems, "\n\t"))
	}
	if len(p.Sections) != 1 {
		t.Fatalf("%d maps, want the node's one", len(p.Sections))
	}
	s := p.Sections[0]
	checkRendered(t, s)
	if len(s.Cells) != len(ids) {
		t.Errorf("%d CPUs drawn, the node has %d online", len(s.Cells), len(ids))
	}
	for key, set := range real {
		if got, listed := s.holderCPUs(t, key); !listed || got != set {
			t.Errorf("%s is drawn on cpus %q (in the legend: %t); its cgroup has %q", key, got, listed, set)
		}
	}

	status := string(run(t, "", "status", "--address", strings.TrimPrefix(a.MetricsURL, "http://")))
	for key, set := range real {
		if !strings.Contains(status, " container "+set+": "+key+"\n") {
			t.Errorf("nriwasm status lacks %s on %s:\n%s", key, set, status)
		}
	}
}
