package topologyaware_test

import "github.com/nriwasm/nriwasm/sdk/go/policytest"

// builds, with the tests themselves built for wasip1, are two instances of
// the Go build, which is the Wasm build there (policytest.SelfBuilds).
var builds = policytest.SelfBuilds(newPolicy)
