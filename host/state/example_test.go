package state_test

import (
	"fmt"
	"os"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/state"
)

// After a restart the agent loads the checkpoint, then reconciles it with what
// the runtime reports in Synchronize.
func Example() {
	dir, _ := os.MkdirTemp("", "state")
	defer os.RemoveAll(dir)

	j := state.New()
	j.AddContainer(&abi.Container{Id: "a"}, &abi.ContainerAdjustment{CpusetCpus: "0-1"})
	j.AddContainer(&abi.Container{Id: "b"}, &abi.ContainerAdjustment{CpusetCpus: "2-3"})
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: "a", CpusetCpus: "4-5"})
	if err := state.NewCheckpoint(dir).Save(j); err != nil {
		panic(err)
	}

	j, err := state.Load(dir) // on error: log it, carry on with the empty journal
	if err != nil {
		panic(err)
	}
	forgotten, annotated := j.Reconcile(nil, []*abi.Container{{Id: "a"}, {Id: "c"}})
	for _, c := range forgotten {
		fmt.Printf("forget %s (had %q)\n", c.Id, c.GetAssignment().GetCpusetCpus())
	}
	for _, c := range annotated {
		fmt.Printf("sync %s with %q\n", c.Id, c.GetAssignment().GetCpusetCpus())
	}
	// Output:
	// forget b (had "2-3")
	// sync a with "4-5"
	// sync c with ""
}
