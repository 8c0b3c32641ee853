// Command conformance is the conformance policy built as a Wasm module:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o sdk/go/conformance/conformance.wasm ./sdk/go/conformance/cmd/conformance
package main

import (
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

func init() { policy.Register(&conformance.Policy{}) }

func main() {}
