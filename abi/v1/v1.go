// Package v1 is the nriwasm ABI, version 1: the protobuf messages a host and a
// policy module exchange, the names of the exports and imports that carry them, and
// a typed client over any Transport. abi/README.md states the calling convention
// byte by byte; the host (host/) and the SDKs (sdk/go, sdk/rust) with the policies
// built on them are its two sides and import nothing of each other, except the
// command line (host/internal/cli), which links the built-in policies' Go builds
// for `simulate --native` (TestLayering checks it; host/RATIONALE.md says why).
//
// Import it as abi:
//
//	import abi "github.com/nriwasm/nriwasm/abi/v1"
package v1

// The ABI version this package describes. A policy reports
// ABIMajor<<16 | ABIMinor from its nriwasm_abi_version export.
const (
	ABIMajor = 1
	ABIMinor = 5
)

// Names of the guest's exports and the host's imports.
const (
	// ExportABIVersion is `() -> i32`: ABIMajor<<16 | ABIMinor.
	ExportABIVersion = "nriwasm_abi_version"
	// ExportRequestBuffer is `(size i32) -> i32`: a pointer to a guest-owned
	// buffer of at least size bytes.
	ExportRequestBuffer = "nriwasm_request_buffer"
	// ExportCall is `(method i32, length i32) -> i64`: the Response's
	// pointer<<32 | length.
	ExportCall = "nriwasm_call"
	// ExportIdle is `() -> ()`, optional: work the guest can do between
	// calls (a Go guest's garbage collection). The host calls it after an
	// answer has left, when no call is waiting.
	ExportIdle = "nriwasm_idle"
	// ExportMemory is the guest's linear memory.
	ExportMemory = "memory"
	// ExportInitialize is the WASI reactor initializer, run once if present.
	ExportInitialize = "_initialize"

	// HostModule is the module name of the host's imports.
	HostModule = "nriwasm"
	// HostLog is `(level i32, ptr i32, length i32) -> ()`: one log message.
	HostLog = "log"
	// MaxLogMessage is the longest log message the host keeps; longer ones are cut.
	MaxLogMessage = 4096

	// MetadataSection is the custom section holding an encoded PolicyMetadata.
	MetadataSection = "nriwasm.metadata"
)

// Version packs a major and minor version the way nriwasm_abi_version returns them.
func Version(major, minor uint32) uint32 { return major<<16 | minor&0xffff }

// SplitVersion unpacks a value returned by nriwasm_abi_version.
func SplitVersion(v uint32) (major, minor uint32) { return v >> 16, v & 0xffff }
