// Package kit groups the pieces a Go resource policy needs besides its
// placement logic, one job per package:
//
//   - topology: an index over the Init topology (CPUs, cores, packages,
//     NUMA nodes and their distances, caches, memory kinds, devices);
//   - quantity: CPU quantities ("750m", "1.5") and cpuset amounts
//     ("cpuset:0-3", "exclude-cpuset:0-3") as nri-plugins writes them;
//   - claims: which prepared DRA claims a container holds, the checks and
//     answer of a repeated Allocate, and a whole Allocate;
//   - dirty: the list of pools or balloons changed since the last answer;
//   - containers: a container's effective annotations (nri-plugins'
//     scoping and shared keys), a whole CreateContainer, and
//     StopContainer and RemoveContainer answered alike (Forget);
//   - expr: nri-plugins' matchExpressions (keys, operators, groupBy
//     expansion).
//
// Init reads an Init request's configuration and topology with the
// policy's own decoder and index. The packages import only the ABI (abi/v1, abi/cpuset), the SDK's policy
// package (its logger and claim helpers) and the standard library: a policy
// built with them stays a plain Wasm reactor. The test
// side lives in sdk/go/policytest.
package kit

import abi "github.com/nriwasm/nriwasm/abi/v1"

// Init reads what a policy's Init starts from, in the order a bad request
// is refused: the configuration, decoded by parse (the policy's own, with
// sdk/go/policyconfig), then the topology, indexed by index (the policy's
// own index, over kit/topology). The first error is the answer's.
//
//	cfg, ix, err := kit.Init(r, ParseConfig, newTopoIndex)
//	if err != nil {
//		return nil, err
//	}
func Init[C, I any](r *abi.InitRequest, parse func([]byte) (C, error), index func(*abi.Topology) (I, error)) (C, I, error) {
	var ix I
	cfg, err := parse(r.GetConfig())
	if err != nil {
		return cfg, ix, err
	}
	ix, err = index(r.GetTopology())
	return cfg, ix, err
}
