//go:build !wasip1

package topologyaware_test

import (
	"testing"

	"github.com/nriwasm/nriwasm/internal/builtintest"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
)

// builds are the policy's Go build and its built-in .wasm, run by the host's
// Wasm runtime (builtintest.Builds).
var builds = builtintest.Builds(topologyaware.Name, newPolicy)

func TestMain(m *testing.M) { builtintest.Main(m) }
