// Package builtin holds the policies built into the nriwasm binary, as sealed
// Wasm modules. `make policies` rebuilds them from their sources:
//
//	conformance.wasm     ← sdk/go/conformance/cmd/conformance (the ABI reference policy)
//	topology-aware.wasm  ← policies/topologyaware/cmd/topology-aware
//	balloons.wasm        ← policies/balloons/cmd/balloons
package builtin

import (
	"maps"
	"slices"
	"unsafe"

	_ "embed" // the modules, as strings: read-only data of the binary
)

// Default is the policy the agent runs when none is named.
const Default = "topology-aware"

var (
	//go:embed conformance.wasm
	conformance string
	//go:embed topology-aware.wasm
	topologyAware string
	//go:embed balloons.wasm
	balloons string
)

var modules = map[string]string{
	"conformance":    conformance,
	"topology-aware": topologyAware,
	"balloons":       balloons,
}

// Module returns the named built-in policy module. The bytes are the binary's
// own read-only data, not a copy: a caller must not modify them (writing
// faults). Copying 4–7 MB onto the heap for a module the agent keeps for its
// whole life would count twice in its RSS (docs/performance.md, "Footprint").
func Module(name string) ([]byte, bool) {
	s, ok := modules[name]
	if !ok {
		return nil, false
	}
	return unsafe.Slice(unsafe.StringData(s), len(s)), true
}

// Names lists the built-in policies, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(modules))
}
