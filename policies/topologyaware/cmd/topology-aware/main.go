// Command topology-aware is the topology-aware policy built as a Wasm module:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o topology-aware.wasm ./policies/topologyaware/cmd/topology-aware
package main

import (
	"runtime/debug"

	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// In Wasm the Go runtime has a single thread: a GC cycle's marking is done by
// the calls that allocate while it runs (mark assists), not by a background
// worker. At the default GOGC=100 that made a decision with 2,000 live
// containers 4× slower at the median. A policy's heap is a few MB, so it
// trades memory for time: a cycle every 4× the live heap. (No soft memory
// limit: linear memory never shrinks, so the runtime would count what it
// once grew to and collect on every allocation.)
func init() {
	debug.SetGCPercent(400)
	policy.Register(topologyaware.New())
}

func main() {}
