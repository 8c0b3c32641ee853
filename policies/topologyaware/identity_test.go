package topologyaware_test

import (
	"context"
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// teeOpener opens harnesses whose every call is compared; calls counts them.
var teeOpener = policytest.TeeOpener(builds, openOn)

// identityScenarios run natively and through the .wasm, call by call.
var identityScenarios = []policytest.Scenario[opener]{
	{Name: "mixed", Run: func(t *testing.T, open opener, machine string) { mixed(t, mustOpen(t, open, machine, "")) }},
	{Name: "mixed/shared", Run: func(t *testing.T, open opener, machine string) {
		mixed(t, mustOpen(t, open, machine, "pinMemory: false\npreferSharedCPUs: true\n"))
	}},
	{Name: "restore", Run: func(t *testing.T, open opener, machine string) {
		restoreScenario(t, open, machine, "reservedPoolNamespaces: [monitoring]\nreservedResources:\n  cpu: cpuset:4-5\n")
	}},
	{Name: "dra", Run: draRestoreScenario},
	{Name: "update", Run: updateScenario},
	{Name: "bad config", Run: badConfigScenario},
	{Name: "exhaustion", Run: func(t *testing.T, open opener, machine string) {
		h := mustOpen(t, open, machine, draOn)
		h.Create(bestEffort("be"))
		for i := 0; ; i++ {
			if _, err := h.TryCreate(guaranteed(fmt.Sprintf("g%03d", i), 3500)); err != nil {
				break
			}
		}
		if _, err := h.TryAllocate(cpuClaim("big", devOf(h, 0)+":4096")); err == nil {
			t.Errorf("4096 CPUs fit")
		}
		_, _ = h.Client.Synchronize(context.Background(), &abi.SynchronizeRequest{Pods: []*abi.PodSandbox{}, Containers: nil})
	}},
}

// badConfigScenario: refusals of Init and Reconfigure, and of bad claims.
func badConfigScenario(t *testing.T, open opener, machine string) {
	for _, cfg := range []string{"reservedResource:\n  cpu: 1\n", "colocatePods: maybe\n", "reservedResources:\n  cpu: cpuset:0-x\n",
		"availableResources:\n  cpu: cpuset:0-8191\n", "dra: {enabled: maybe}\n", "a: [1\n"} {
		if _, err := open(t, machine, cfg, nil); err == nil {
			t.Errorf("config %q accepted", cfg)
		}
	}
	h := mustOpen(t, open, machine, draOn)
	h.Create(guaranteed("g", 2000))
	for _, cfg := range []string{"reservedResources:\n  cpu: 4096\n", "dra:\n  on: true\n"} {
		if _, err := h.Client.Reconfigure(context.Background(), &abi.ReconfigureRequest{Config: []byte(cfg)}); err == nil {
			t.Errorf("Reconfigure %q accepted", cfg)
		}
	}
	for _, c := range []*abi.Claim{cpuClaim(""), cpuClaim("u", "nope"), cpuClaim("u", devOf(h, 0)+":0.5")} {
		if _, err := h.TryAllocate(c); err == nil {
			t.Errorf("claim %v accepted", c)
		}
	}
}

// TestNativeAndWasmAgree runs every identity scenario on every fixture
// machine natively and through the built-in .wasm, requiring proto.Equal
// answers at every call.
func TestNativeAndWasmAgree(t *testing.T) {
	policytest.Agree(t, machines, identityScenarios, 3, teeOpener)
}

// nativeAndWasm runs a feature's scenario natively, then natively and
// through the built-in .wasm at once, comparing every answer.
func nativeAndWasm(t *testing.T, scenario func(t *testing.T, open opener)) {
	t.Run("native", func(t *testing.T) { scenario(t, tryHarness) })
	t.Run("wasm", func(t *testing.T) {
		calls := 0
		scenario(t, teeOpener(&calls))
		if calls == 0 {
			t.Errorf("no call compared")
		}
	})
}
