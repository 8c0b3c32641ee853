// Package netdev holds the netdev policy, written in Rust with sdk/rust: it
// offers the node's network interfaces as DRA devices and reports KEP-4817
// network data for the claims that allocate them (src/lib.rs has the rules).
// Module is the sealed module; `make policies` rebuilds it from this directory's
// crate:
//
//	cargo build --release --target wasm32-wasi && nriwasm policy seal netdev.wasm
package netdev

import _ "embed"

// Module is the sealed netdev policy module.
//
//go:embed netdev.wasm
var Module []byte
