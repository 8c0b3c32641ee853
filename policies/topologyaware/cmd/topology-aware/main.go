// Command topology-aware is the topology-aware policy built as a Wasm module:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o topology-aware.wasm ./policies/topologyaware/cmd/topology-aware
package main

import (
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

func init() { policy.Register(topologyaware.New()) }

func main() {}
