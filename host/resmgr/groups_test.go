package resmgr_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/state"
	"github.com/nriwasm/nriwasm/internal/testkit"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
)

// TestGroupedUpdates: the agent announces ABI v1.1 at Init, so the policy
// sends a group; the manager hands it on as the one update the policy sent
// (host/nri expands it for the runtime) and journals every member (a repeated
// id twice, in order). A group with an empty id or a container that is not
// live is refused whole, counted under the member's field as sent, and
// nothing of it is journaled.
func TestGroupedUpdates(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		group string
		want  []string // the containers updated to 2-3; nil: refused
		field string   // the refused field
	}{
		{"applied per container", "b,c", []string{"b", "c"}, ""},
		{"repeated id", "b,c,b", []string{"b", "c", "b"}, ""},
		{"empty id", "b,,c", nil, "updates[0].also_container_ids[0]"},
		{"unknown container", "b,c,ghost", nil, "updates[0].also_container_ids[1]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(nil)
			cfg := config.Default()
			cfg.Policy.Name = "conformance"
			cfg.StateDir = t.TempDir()
			met := metrics.New()
			m, err := resmgr.New(ctx, cfg, testTopology(), f.load, resmgr.WithNodeName("node-1"), resmgr.WithMetrics(met))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Stop() })
			if got := f.inits[len(f.inits)-1].GetHostAbiMinor(); got != abi.ABIMinor {
				t.Fatalf("Init host_abi_minor = %d, want %d", got, abi.ABIMinor)
			}
			for _, id := range []string{"a", "b", "c"} {
				pod, c := container(id, "0-1")
				if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
					t.Fatal(err)
				}
			}
			pod, a := container("a", "0-1")
			a.Annotations[conformance.GroupAnnotation] = tt.group
			updates, err := m.UpdateContainer(ctx, pod, a, &abi.Resources{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != nil && (len(updates) != 1 || len(updates[0].GetAlsoContainerIds()) != len(tt.want)-1) {
				t.Fatalf("updates %v, want the policy's one group", updates)
			}
			var updated []string
			for id, u := range abi.EachContainer(updates) {
				if u.GetCpusetCpus() != "2-3" {
					t.Fatalf("update of %s: %v, want cpus 2-3", id, u)
				}
				updated = append(updated, id)
			}
			if !slices.Equal(updated, tt.want) {
				t.Fatalf("updated %v, want %v", updated, tt.want)
			}
			journal := state.FromRestoreState(m.Journal())
			for _, id := range []string{"b", "c"} {
				c, _ := journal.Container(id)
				want := "0-1"
				if len(tt.want) > 0 {
					want = "2-3"
				}
				if got := c.GetAssignment().GetCpusetCpus(); got != want {
					t.Fatalf("journaled cpus of %s = %q, want %q", id, got, want)
				}
			}
			if tt.field != "" {
				exp := "# HELP nriwasm_policy_answers_refused_total Policy answers refused by the host's shape checks, by method and offending field.\n" +
					"# TYPE nriwasm_policy_answers_refused_total counter\n" +
					"nriwasm_policy_answers_refused_total{field=\"" + tt.field + "\",method=\"UpdateContainer\"} 1\n"
				if err := testutil.GatherAndCompare(met.Registry, strings.NewReader(exp), "nriwasm_policy_answers_refused_total"); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestGroupSurvivesAKill: a grouped update goes to the decision log once,
// with the next placement's record, and a process killed right after that
// answer restores every member's assignment from the log.
func TestGroupSurvivesAKill(t *testing.T) {
	ctx := context.Background()
	var dir string
	m := newManager(t, newFake(nil), func(c *config.Config) { dir = c.StateDir })
	if _, err := m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		pod, c := container(id, "0-1")
		if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Stop(); err != nil { // a full save: what follows is in the log only
		t.Fatal(err)
	}
	ck := state.NewCheckpoint(dir)
	saved, err := os.ReadFile(ck.Path())
	if err != nil {
		t.Fatal(err)
	}

	m2 := newManager(t, newFake(nil), func(c *config.Config) { c.StateDir = dir })
	var live []*abi.Container
	for _, id := range []string{"a", "b", "c"} {
		_, c := container(id, "0-1")
		live = append(live, c)
	}
	pod, _ := container("a", "0-1")
	if _, err := m2.Synchronize(ctx, []*abi.PodSandbox{pod}, live); err != nil {
		t.Fatal(err)
	}
	groupThenCreate(t, m2, pod)
	// m2 is never stopped: killed right after the answer.
	restoredAfterKill(t, ck, saved, map[string]string{"a": "0-1", "b": "2-3", "c": "2-3", "d": "4-5"})
}

// TestSaveAfterAGroup: a save after an earlier one re-encodes only what
// changed since (host/state RATIONALE, "Why does the journal keep its records
// encoded?"); the checkpoint alone, without the log, must still hold every
// member of a grouped update with its new assignment, and be the journal.
func TestSaveAfterAGroup(t *testing.T) {
	ctx := context.Background()
	var dir string
	m := newManager(t, newFake(nil), func(c *config.Config) { dir = c.StateDir })
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		pod, c := container(id, "0-1")
		if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for saved(t, dir) < 3 { // the background save: the journal is encoded
		if time.Now().After(deadline) {
			t.Fatal("no background save of the 3 containers within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pod, _ := container("a", "0-1")
	groupThenCreate(t, m, pod)
	want := m.Journal()
	if err := m.Stop(); err != nil { // saves
		t.Fatal(err)
	}
	data, err := os.ReadFile(state.NewCheckpoint(dir).Path())
	if err != nil {
		t.Fatal(err)
	}
	j, err := state.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	for id, cpus := range map[string]string{"a": "0-1", "b": "2-3", "c": "2-3", "d": "4-5"} {
		got, ok := j.Container(id)
		if !ok || got.GetAssignment().GetCpusetCpus() != cpus {
			t.Fatalf("checkpoint: container %s %v, assignment %v; want cpus %s", id, ok, got.GetAssignment(), cpus)
		}
	}
	testkit.EqualProto(t, j.RestoreState(), want)
}

// groupThenCreate updates container a of pod annotated with the group b,c, so
// the conformance policy answers one grouped update for them, then creates d
// (4-5).
func groupThenCreate(t *testing.T, m *resmgr.Manager, pod *abi.PodSandbox) {
	t.Helper()
	ctx := context.Background()
	_, a := container("a", "0-1")
	a.Annotations[conformance.GroupAnnotation] = "b,c"
	if _, err := m.UpdateContainer(ctx, pod, a, &abi.Resources{}); err != nil {
		t.Fatal(err)
	}
	_, d := container("d", "4-5")
	if _, _, err := m.CreateContainer(ctx, pod, d); err != nil {
		t.Fatal(err)
	}
}
