package policyconfig

import "testing"

// JSONOnly makes Decode, DecodeFunc and JSON read as in a Wasm module, JSON only (the
// host converted YAML already), until t ends.
func JSONOnly(t testing.TB) {
	old := toJSON
	toJSON = jsonOnly
	t.Cleanup(func() { toJSON = old })
}
