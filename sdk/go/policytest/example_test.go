package policytest_test

import (
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// A policy's test opens a runtime on a fixture machine, creates
// containers, and checks what the runtime holds after each step.
func Example() {
	t := &testing.T{} // a test's *testing.T
	r, err := native.New(&toy{})
	if err != nil {
		panic(err)
	}
	rt, err := policytest.Open(t, r, &abi.InitRequest{Topology: policytest.Machine(t, "Desktop1Socket")})
	if err != nil {
		panic(err)
	}
	rt.Create(policytest.Container("web", 500))
	rt.Create(policytest.Container("db", 2000).Guaranteed())
	policytest.CheckPlacements(t, rt.Topology, rt.Containers)
	fmt.Println("db:", rt.CPUs("db"), "web:", rt.CPUs("web"))
	// Output:
	// db: 0-1 web: 2-15
}
