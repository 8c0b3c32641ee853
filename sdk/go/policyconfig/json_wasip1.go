//go:build wasip1

package policyconfig

// accepted names the documents Decode reads.
const accepted = "JSON"

// toJSON is jsonOnly: in a module the host has converted the configuration
// to JSON already (the policy declares CONFIG_FORMAT_JSON), so the guest
// links no YAML parser.
var toJSON = jsonOnly
