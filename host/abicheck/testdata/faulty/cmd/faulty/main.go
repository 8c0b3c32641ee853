// Command faulty is the faulty policy built as a Wasm module; `make policies`
// builds and seals it into host/abicheck/testdata/faulty.wasm.
package main

import (
	"github.com/nriwasm/nriwasm/host/abicheck/testdata/faulty"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

func init() { policy.Register(&faulty.Policy{}) }

func main() {}
