package nri_test

import (
	"slices"
	"testing"

	"github.com/containerd/nri/pkg/api"

	"github.com/nriwasm/nriwasm/sdk/go/conformance"
)

// TestGroupedUpdateThroughNRI: the conformance policy answers an update with
// one group; the runtime gets one update per member with the group's cpuset
// and the journal records every member. A group with a member that is not
// live is refused whole: the runtime gets nothing, nobody moves.
func TestGroupedUpdateThroughNRI(t *testing.T) {
	for _, tt := range []struct {
		name, group string
		want        []string // the containers the runtime moves to 2-3; nil: refused
	}{
		{"applied per member", "b,c", []string{"b", "c"}},
		{"a member not live", "b,ghost", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			rt.start()
			a := startAgent(t, rt, agentOpts{policy: "conformance"})
			rt.waitSync()
			p := pod("p", "burstable")
			if err := rt.runPod(p); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"b", "c", "a"} {
				c := ctr(p, name, 500, 0, 0)
				c.Annotations = map[string]string{conformance.CPUSetAnnotation: "0-1"}
				if name == "a" {
					c.Annotations[conformance.GroupAnnotation] = tt.group
				}
				c.Id = name // the group names containers by id
				if _, err := rt.create(p, c); err != nil {
					t.Fatal(err)
				}
			}
			resp, err := rt.updateContainer("a", &api.LinuxResources{})
			if err != nil {
				t.Fatal(err)
			}
			var sent []string
			for _, u := range resp.GetUpdate() {
				if u.GetContainerId() == "" {
					continue // the adaptation's own entry for the updated container
				}
				require(t, u.GetLinux().GetResources().GetCpu().GetCpus(), "2-3", "cpus sent to "+u.GetContainerId())
				sent = append(sent, u.GetContainerId())
			}
			if !slices.Equal(sent, tt.want) {
				t.Fatalf("updates sent to %v, want %v", sent, tt.want)
			}
			want := "0-1"
			if tt.want != nil {
				want = "2-3"
			} else {
				require(t, a.counter(t, "nriwasm_policy_answers_refused_total", map[string]string{"method": "UpdateContainer", "field": "updates[0].also_container_ids[0]"}), 1.0, "refusals")
			}
			for _, id := range []string{"b", "c"} {
				require(t, rt.cpus(id), want, "runtime's cpus of "+id)
				require(t, a.assignment(t, id).GetCpusetCpus(), want, "journaled cpus of "+id)
			}
		})
	}
}
