package policyconfig

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errNotJSON is why a Wasm module's Decode refuses a document that is not
// JSON: a host that converts configurations (PolicyMetadata.config_format)
// sends JSON or refuses the document itself, so YAML here came from a host
// that predates the conversion.
var errNotJSON = errors.New("not JSON: this policy reads its configuration as JSON " +
	"(PolicyMetadata.config_format), which the nriwasm agent converts from YAML; " +
	"an agent that predates config_format sends YAML as written: write the configuration as JSON or update the agent")

// jsonOnly returns raw if it is one JSON document (by valid, the check of
// the JSON reader the caller uses, so a module links one reader), null if it
// is blank (as YAML's conversion has it), errNotJSON otherwise.
func jsonOnly(raw []byte, valid func([]byte) bool) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("null"), nil
	}
	if !valid(raw) {
		return nil, errNotJSON
	}
	return raw, nil
}

// JSON is raw, a configuration Decode accepts, as JSON: in a Wasm module the
// host has converted it already, outside one it is converted here. A policy
// that reads part of its configuration apart from Decode reads this instead of
// raw, so its module needs no YAML parser either.
func JSON(raw []byte) ([]byte, error) {
	js, err := toJSON(raw, json.Valid)
	if err != nil {
		return nil, Errorf(Root, "%v", err)
	}
	return js, nil
}
