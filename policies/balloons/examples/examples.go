// Package examples holds the balloons policy's bundled example: the scenario
// and configuration `nriwasm simulate --policy balloons` runs when given
// neither --scenario nor --config.
package examples

import _ "embed"

// Scenario is scenario.yaml: docs/simulate.md describes its format.
//
//go:embed scenario.yaml
var Scenario []byte

// Config is config.yaml, the policy configuration the scenario is run with.
//
//go:embed config.yaml
var Config []byte
