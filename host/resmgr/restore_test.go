package resmgr_test

import (
	"context"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/state"
)

// TestRestartWithAHugeJournaledValue: a checkpoint written before answers were
// bounded holds a 1 MiB annotation, which every restore Init would carry to
// the policy. The restarted agent drops that assignment, keeps the
// container, and serves: restore Init and a new container succeed.
func TestRestartWithAHugeJournaledValue(t *testing.T) {
	dir := t.TempDir()
	pod, c := container("c", "4-5")
	c.Assignment = &abi.ContainerAdjustment{CpusetCpus: "4-5", Annotations: map[string]string{"example.com/huge": strings.Repeat("x", 1<<20)}}
	j := state.FromRestoreState(&abi.RestoreState{Pods: []*abi.PodSandbox{pod}, Containers: []*abi.Container{c}})
	if err := state.NewCheckpoint(dir).Save(j); err != nil {
		t.Fatal(err)
	}
	f := newFake(nil)
	m := newManager(t, f, func(c *config.Config) { c.StateDir = dir })
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	rs := f.inits[0].GetRestore()
	if len(rs.GetContainers()) != 1 || rs.GetContainers()[0].GetAssignment() != nil {
		t.Fatalf("restore Init got %d containers, assignment %v; want the container without its refused assignment",
			len(rs.GetContainers()), rs.GetContainers()[0].GetAssignment().GetCpusetCpus())
	}
	_, c2 := container("c2", "6-7")
	if _, _, err := m.CreateContainer(context.Background(), pod, c2); err != nil {
		t.Fatalf("CreateContainer after the restart: %v", err)
	}
}
