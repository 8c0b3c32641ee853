//go:build wasip1

// Command goinwasm is a wasip1 reactor exporting host/wasm/internal/goinwasm's
// workloads with no ABI around them, for host/wasm's BenchmarkGoInWasm and
// TestGoInWasmAgrees. Each export runs its workload n times and returns the
// checksum. Rebuild testdata/goinwasm.wasm from host/wasm with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -o testdata/goinwasm.wasm ./testdata/goinwasm
package main

import "github.com/nriwasm/nriwasm/host/wasm/internal/goinwasm"

func main() {}

//go:wasmexport sort
func sort(n int32) uint64 { return goinwasm.Sort(int(n)) }

//go:wasmexport map
func mapWorkload(n int32) uint64 { return goinwasm.Map(int(n)) }

//go:wasmexport bits
func bitsWorkload(n int32) uint64 { return goinwasm.Bits(int(n)) }

//go:wasmexport format
func format(n int32) uint64 { return goinwasm.Format(int(n)) }
