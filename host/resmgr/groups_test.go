package resmgr_test

import (
	"context"
	"slices"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/state"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
)

// TestGroupedUpdates: the agent announces ABI v1.1 at Init, so the policy
// sends a group; the agent applies it as one update per container (a
// repeated id twice, in order), and refuses a group with an empty id or an
// unknown container whole.
func TestGroupedUpdates(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		group string
		want  []string // the containers updated to 2-3; nil: refused
	}{
		{"applied per container", "b,c", []string{"b", "c"}},
		{"repeated id", "b,c,b", []string{"b", "c", "b"}},
		{"empty id", "b,,c", nil},
		{"unknown container", "b,ghost", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(nil)
			m := newManager(t, f, nil)
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
			var updated []string
			for _, u := range updates {
				if u.GetCpusetCpus() != "2-3" || len(u.GetAlsoContainerIds()) != 0 {
					t.Fatalf("update %v, want cpus 2-3 and no group", u)
				}
				updated = append(updated, u.GetContainerId())
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
		})
	}
}
