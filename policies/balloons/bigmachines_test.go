package balloons_test

import "github.com/nriwasm/nriwasm/host/topology/topologytest"

// bigMachines are fixtures only the benchmarks use (discovery alone takes
// most of a second).
var bigMachines = []struct {
	name string
	m    func() topologytest.Machine
}{
	{"Sparse4096CPU8Socket", topologytest.Sparse4096CPU8Socket},
}
