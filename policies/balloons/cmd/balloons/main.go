// Command balloons is the balloons policy built as a Wasm module:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o balloons.wasm ./policies/balloons/cmd/balloons
package main

import (
	"runtime/debug"

	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// A policy's heap is a few MB and the Go runtime in Wasm has one thread, so
// GC marking is paid by the allocating calls: a cycle every 4× the live heap
// trades memory for time, as topology-aware does (see its main for the
// measurements behind it).
func init() {
	debug.SetGCPercent(400)
	policy.Register(balloons.New())
}

func main() {}
