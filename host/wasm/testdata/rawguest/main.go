//go:build wasip1

// Command rawguest breaks the calling convention on purpose, for host/wasm's tests.
// It is built three ways (see host/wasm/fixtures_test.go):
//
//	rawguest.wasm          version 1.0; every call answers bytes that are not a Response,
//	                       except method 15 (DumpState), which answers a pointer past the end of memory
//	rawguest-wrongabi.wasm (-tags wrongabi) reports ABI version 2.0
//	rawguest-nocall.wasm   (-tags nocall) lacks the nriwasm_call export
package main

import "unsafe"

var request = make([]byte, 1<<16)

//go:wasmexport nriwasm_request_buffer
func requestBuffer(size uint32) uint32 {
	if int(size) > len(request) {
		request = make([]byte, size)
	}
	return uint32(uintptr(unsafe.Pointer(&request[0])))
}

func main() {}
