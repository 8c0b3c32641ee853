//go:build !wasip1

package policyconfig

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// accepted names the documents Decode reads.
const accepted = "YAML or JSON"

// toJSON converts a document Decode reads to JSON: yamlToJSON outside Wasm.
var toJSON = yamlToJSON

// yamlToJSON converts a YAML or JSON document to JSON. Outside Wasm nothing
// converts the configuration on the way in (tests, `simulate --native`), so
// Decode reads YAML itself, with the conversion the host uses. The
// conversion writes valid JSON, so the reader's check (toJSON's second
// argument) is not needed.
func yamlToJSON(raw []byte, _ func([]byte) bool) ([]byte, error) {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("not %s: %w", accepted, err)
	}
	return js, nil
}
