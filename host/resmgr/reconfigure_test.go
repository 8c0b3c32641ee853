package resmgr_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/sdk/go/conformance"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// refuser is the conformance policy whose Reconfigure refuses a
// configuration that names an error code (ERROR_CODE_…) with that code;
// its Init accepts any configuration but "reject".
type refuser struct{ conformance.Policy }

func (p *refuser) Reconfigure(r *abi.ReconfigureRequest) (*abi.ReconfigureResponse, error) {
	if code, ok := abi.ErrorCode_value[string(r.GetConfig())]; ok {
		return nil, abi.Errorf(abi.ErrorCode(code), "config.reservedResources.cpu", "refused with %s", r.GetConfig())
	}
	return p.Policy.Reconfigure(r)
}

// TestReconfigureRefusals: a policy configuration the running policy cannot
// apply live (no Reconfigure, or a valid configuration the running
// containers keep from applying) is applied by a swap; one it finds invalid,
// or refuses for its own failure, is not swapped to: the running
// configuration and instance stay, and an invalid one is counted and
// reported as invalid.
func TestReconfigureRefusals(t *testing.T) {
	for _, tc := range []struct {
		code    abi.ErrorCode
		swap    bool
		counted string // nriwasm_config_reloads_total's result
	}{
		{abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, true, metrics.ReloadApplied},
		{abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, true, metrics.ReloadApplied},
		{abi.ErrorCode_ERROR_CODE_UNIMPLEMENTED, true, metrics.ReloadApplied},
		{abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, false, metrics.ReloadInvalid},
		{abi.ErrorCode_ERROR_CODE_INTERNAL, false, metrics.ReloadRejected},
	} {
		t.Run(tc.code.String(), func(t *testing.T) {
			var instances atomic.Int32
			res := &wasmResolve{t: t, natives: map[string]func() policy.Policy{"refuser": func() policy.Policy {
				instances.Add(1)
				return &refuser{}
			}}}
			cfg := config.Default()
			cfg.Policy.Name, cfg.StateDir = "refuser", t.TempDir()
			cand, err := res.resolve(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			met := metrics.New()
			m, err := resmgr.New(context.Background(), cfg, policytest.Machine(t, "Desktop1Socket"), cand.Load,
				resmgr.WithNodeName("node-1"), resmgr.WithLogger(testLog(t)), resmgr.WithMetrics(met),
				resmgr.WithIdentity(cand.Identity), resmgr.WithResolve(res.resolve))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Stop() })
			running := m.Config()
			next := *running
			next.Policy.Data = []byte(tc.code.String())

			err = m.ApplyConfig(context.Background(), &next, nil)
			swapped := instances.Load() == 2
			if swapped != tc.swap {
				t.Fatalf("swapped %v (%d instances), want %v; ApplyConfig: %v", swapped, instances.Load(), tc.swap, err)
			}
			if tc.swap {
				if err != nil || string(m.Config().Policy.Data) != tc.code.String() {
					t.Fatalf("ApplyConfig: %v, running configuration %q; want the new one applied by the swap", err, m.Config().Policy.Data)
				}
				if n := mustCounter(met, "nriwasm_policy_swaps_total", metrics.SwapAccepted).value(); n != 1 {
					t.Fatalf("swaps accepted %v, want 1", n)
				}
			} else {
				pe, ok := errors.AsType[*abi.PolicyError](err)
				if !ok || pe.Code != tc.code || m.Config() != running {
					t.Fatalf("ApplyConfig: %v (running configuration changed %v); want the policy's %s and the running one kept", err, m.Config() != running, tc.code)
				}
			}
			if n := mustCounter(met, "nriwasm_config_reloads_total", tc.counted).value(); n != 1 {
				t.Fatalf("reloads %s %v, want 1", tc.counted, n)
			}
		})
	}
}
