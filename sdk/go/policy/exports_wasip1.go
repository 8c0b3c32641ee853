//go:build wasip1

package policy

import (
	"runtime"
	"unsafe"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// The guest side of the calling convention in abi/README.md.

var (
	requestBuf  []byte
	responseBuf []byte
	// idled is set by nriwasm_idle and cleared by each call: a host that
	// idles between calls runs the collector there instead.
	idled bool
)

//go:wasmexport nriwasm_abi_version
func exportABIVersion() uint32 { return abi.Version(abi.ABIMajor, abi.ABIMinor) }

//go:wasmexport nriwasm_request_buffer
func exportRequestBuffer(size uint32) uint32 {
	if int(size) > len(requestBuf) {
		requestBuf = make([]byte, size)
	}
	if len(requestBuf) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&requestBuf[0])))
}

//go:wasmexport nriwasm_call
func exportCall(method, length uint32) uint64 {
	var resp *abi.Response
	switch {
	case Registered() == nil:
		resp = errorResponse(abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "",
			"no policy registered: call policy.Register from an init function"))
	case int(length) > len(requestBuf):
		resp = errorResponse(abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "",
			"request length %d exceeds the request buffer (%d bytes)", length, len(requestBuf)))
	default:
		// The decoded request aliases its bytes (strings are not copied one by one),
		// so it gets bytes of its own: the request buffer is reused by the next call.
		request := make([]byte, length)
		copy(request, requestBuf)
		resp = Registered().Dispatch(abi.Method(method), request)
	}
	// Let the runtime's other goroutines run before the call returns: after
	// an export returns nothing runs until the next call (golang/go#65199),
	// and without this the collector's background workers never finish a
	// cycle once one needs them, so the heap grows until the memory cap.
	// When the host called nriwasm_idle since the previous call, that is
	// where they ran, and this call answers without them; two calls in a
	// row without an idle between yield as before.
	if !idled {
		runtime.Gosched()
	}
	idled = false
	n := resp.SizeVT()
	if n > cap(responseBuf) {
		responseBuf = make([]byte, max(n, 2*cap(responseBuf)))
	}
	out := responseBuf[:n]
	if _, err := resp.MarshalToSizedBufferVT(out); err != nil {
		panic("nriwasm: encode response: " + err.Error())
	}
	if n == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&out[0])))<<32 | uint64(n)
}

// exportIdle gives the runtime's other goroutines the turn a call would
// otherwise give them before it returns: a collection's background mark
// worker, the sweeper. A forced collection here (runtime.GC once the heap
// is half-way to its goal) was measured and rejected: sdk/go/RATIONALE.md.
//
//go:wasmexport nriwasm_idle
func exportIdle() {
	runtime.Gosched()
	idled = true
}

//go:wasmimport nriwasm log
func importLog(level uint32, ptr unsafe.Pointer, length uint32)

func hostLog(level abi.LogLevel, msg string) {
	importLog(uint32(level), unsafe.Pointer(unsafe.StringData(msg)), uint32(len(msg)))
}
