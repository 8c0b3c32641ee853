//go:build wasip1 && !wrongabi

package main

//go:wasmexport nriwasm_abi_version
func abiVersion() uint32 { return 1 << 16 }
