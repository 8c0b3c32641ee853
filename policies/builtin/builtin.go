// Package builtin holds the policies built into the nriwasm binary, as sealed
// Wasm modules. `make policies` rebuilds them from their sources:
//
//	conformance.wasm     ← sdk/go/conformance/cmd/conformance (the ABI reference policy)
//	topology-aware.wasm  ← policies/topologyaware/cmd/topology-aware
//	balloons.wasm        ← policies/balloons/cmd/balloons
package builtin

import (
	_ "embed"
	"maps"
	"slices"
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

// modules are the embedded modules by name: strings in the binary's
// read-only data, paged in from the executable only when read.
var modules = map[string]*string{
	"conformance":    &conformance,
	"topology-aware": &topologyAware,
	"balloons":       &balloons,
}

// Module returns a copy of the named built-in policy module. The binary's own
// pages the copy was read from are then dropped from the process's page
// tables (on Linux, madvise MADV_DONTNEED; they stay in the page cache for
// the next start), so that a running agent does not hold a module's bytes
// twice, on the heap and in its executable's resident pages
// (docs/performance.md, "Footprint").
func Module(name string) ([]byte, bool) {
	s, ok := modules[name]
	if !ok {
		return nil, false
	}
	data := []byte(*s)
	release(*s)
	return data, true
}

// Names lists the built-in policies, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(modules))
}
