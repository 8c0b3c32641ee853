// Command conformance is the conformance policy built as a Wasm module; `make
// policies` builds and seals it into policies/builtin/conformance.wasm.
package main

import (
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

func init() { policy.Register(&conformance.Policy{}) }

func main() {}
