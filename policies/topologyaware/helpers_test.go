package topologyaware_test

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/internal/builtintest"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// machines are the fixture machines the tests run on.
var machines = policytest.VariedMachines

// harness drives one policy instance through a fake runtime
// (policytest.Runtime) that keeps every container's current cpuset and
// mems, each adjustment and update applied.
type harness struct {
	*policytest.Runtime
}

func newHarness(tb testing.TB, machine, config string) *harness {
	tb.Helper()
	h, err := tryHarness(tb, machine, config, nil)
	if err != nil {
		tb.Fatalf("Init: %v", err)
	}
	return h
}

// opener starts a policy instance on a machine: natively (tryHarness) or
// natively and in Wasm at once (the identity suite).
type opener = policytest.Opener[*harness]

// builds are the policy's Go build and its built-in .wasm, which the host's
// runtime runs (builtintest.Builds).
var builds = builtintest.Builds(topologyaware.Name, func() policy.Policy { return topologyaware.New() })

func TestMain(m *testing.M) { builtintest.Main(m) }

var tryHarness = policytest.NativeOpener(builds, openOn)

func openOn(tb testing.TB, t abi.Transport, machine, config string, restore *abi.RestoreState) (*harness, error) {
	var topo *abi.Topology
	if derive, ok := derivedMachines[machine]; ok {
		topo = derive(tb)
	} else {
		topo = policytest.Machine(tb, machine)
	}
	rt, err := policytest.Open(tb, t, &abi.InitRequest{Config: []byte(config), NodeName: "n1", Topology: topo, Restore: restore})
	rt.SortedUpdates = true
	return &harness{rt}, err
}

// spec describes a test container.
type spec = policytest.Spec

func guaranteed(id string, milli int64) spec { return policytest.Container(id, milli).Guaranteed() }
func burstable(id string, milli int64) spec  { return policytest.Container(id, milli) }
func bestEffort(id string) spec              { return policytest.Container(id, 0).BestEffort() }
func system(id string, milli int64) spec     { return policytest.Container(id, milli).In("kube-system") }
