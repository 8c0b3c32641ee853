// Package builtin holds the policies built into the nriwasm binary, as sealed
// Wasm modules. `make policies` rebuilds them from their sources:
//
//	conformance.wasm     ← sdk/go/conformance/cmd/conformance (the ABI reference policy)
//	topology-aware.wasm  ← policies/topologyaware/cmd/topology-aware
//	balloons.wasm        ← policies/balloons/cmd/balloons
package builtin

import (
	"embed"
	"slices"
	"strings"
)

// Default is the policy the agent runs when none is named.
const Default = "topology-aware"

//go:embed *.wasm
var modules embed.FS

// Module returns the named built-in policy module.
func Module(name string) ([]byte, bool) {
	data, err := modules.ReadFile(name + ".wasm")
	return data, err == nil
}

// Names lists the built-in policies, sorted.
func Names() []string {
	entries, _ := modules.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".wasm"))
	}
	slices.Sort(names)
	return names
}
