package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/policies/builtin"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/native"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// natives maps built-in policy names to their Go source, for `simulate
// --native`: the same decisions as the embedded .wasm, run in-process (easier
// to debug and profile). Add a built-in policy here with one line.
var natives = map[string]func() policy.Policy{
	"balloons":       func() policy.Policy { return balloons.New() },
	"conformance":    func() policy.Policy { return &conformance.Policy{} },
	"topology-aware": func() policy.Policy { return topologyaware.New() },
}

// nativePolicy returns a runner for the named built-in policy's Go build.
func nativePolicy(name string) (*native.Runner, error) {
	newPolicy, ok := natives[name]
	if !ok {
		return nil, fmt.Errorf("policy %q has no native build (native: %s; built in: %s): drop --native to run its .wasm",
			name, strings.Join(sortedNames(natives), ", "), strings.Join(builtin.Names(), ", "))
	}
	return native.New(newPolicy())
}

func sortedNames[V any](m map[string]V) []string {
	var names []string
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
