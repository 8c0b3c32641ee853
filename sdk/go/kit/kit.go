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
// The packages import only the ABI (abi/v1, abi/cpuset), the SDK's policy
// package (its logger and claim helpers) and the standard library: a policy
// built with them stays a plain Wasm reactor. The test
// side lives in sdk/go/policytest.
package kit
