package policy

import abi "github.com/nriwasm/nriwasm/abi/v1"

// configFormat is the form every Dispatcher declares in its metadata
// (PolicyMetadata.config_format); DeclareConfigFormat sets it.
var configFormat abi.ConfigFormat

// DeclareConfigFormat sets the form in which the policy wants its
// configuration: a Dispatcher created afterwards (Register, NewDispatcher)
// declares it in the policy's metadata, and the host sends InitRequest.config
// and ReconfigureRequest.config in it. With abi.ConfigFormat_CONFIG_FORMAT_JSON
// the host converts a YAML configuration to JSON, so the guest needs no YAML
// parser (about 1.2 MB of a Go module).
//
// Package policyconfig declares JSON from its init function, before the main
// package's init calls Register: a policy that decodes its configuration with
// it declares JSON without doing anything. A policy that reads its
// configuration bytes itself and wants them as written must not link
// policyconfig, or must call DeclareConfigFormat(CONFIG_FORMAT_UNSPECIFIED)
// before Register.
func DeclareConfigFormat(f abi.ConfigFormat) { configFormat = f }
