// Package wasm loads, sandboxes and calls nriwasm policy modules on wazero.
//
// Load compiles a module (with an on-disk compilation cache when WithCacheDir is
// set), checks its exports, imports and ABI version before any call, and
// instantiates it with nothing but the WASI calls the Go runtime needs and the
// host's log import: no preopened directories, no sockets, no environment, no
// real clock. The returned Policy serializes calls, bounds each with a deadline
// that really stops a runaway call, caps the module's memory, captures its
// stdout and stderr, and after a trap, a deadline or an out-of-memory discards the
// instance and rebuilds it through the RestoreFunc before the next call.
//
// Start-up (the start function, _initialize, the ABI handshake) runs under its
// own deadline, and a cancelled context stops any call. Every answer is
// bounded (DefaultResponseLimit, MaxResponseString) and checked for valid
// UTF-8 and known enum values before the caller sees it; the policy's log is
// bounded per call and per second (MaxLogMessagesPerCall, LogBytesPerSecond).
// A module that is not Wasm, carries two metadata sections, names itself with
// something other than a DNS label and a semver version, or answers Info other
// than its seal says is refused at Load. docs/security.md lists every limit.
//
// See abi/README.md for the calling convention and host/wasm/RATIONALE.md for why
// it works this way.
package wasm
