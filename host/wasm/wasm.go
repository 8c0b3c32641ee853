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
// See abi/README.md for the calling convention and host/wasm/RATIONALE.md for why
// it works this way.
package wasm
