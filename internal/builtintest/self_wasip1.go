package builtintest

import (
	"testing"

	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// Builds are, built for wasip1, two instances of newPolicy's Go build
// (policytest.SelfBuilds): the test binary is the Wasm build.
func Builds(_ string, newPolicy func() policy.Policy) policytest.Builds {
	return policytest.SelfBuilds(newPolicy)
}

// run runs the tests.
func run(m *testing.M) int { return m.Run() }
