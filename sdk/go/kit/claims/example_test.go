package claims_test

import (
	"fmt"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/claims"
)

// A policy keeps its prepared claims by uid and asks which a new container
// holds.
func ExampleFinder() {
	type grant struct{ cpus string }
	prepared := map[string]*grant{"3f2a-77": {cpus: "4-5"}}
	f := claims.Finder[*grant]{Driver: "dra.cpu", EnvPrefix: "DRA_CPUSET_", EnvValue: func(g *grant) string { return g.cpus }}

	byCDI := &abi.Container{CdiDevices: []string{abi.CDIDeviceName("dra.cpu", "3f2a-77", 0)}}
	byEnv := &abi.Container{Env: []*abi.KeyValue{{Key: "DRA_CPUSET_3f2a_77", Value: "4-5"}}}
	for _, c := range []*abi.Container{byCDI, byEnv} {
		held, err := f.Of(c, prepared)
		fmt.Println(len(held), held[0].cpus, err)
	}
	// Output:
	// 1 4-5 <nil>
	// 1 4-5 <nil>
}
