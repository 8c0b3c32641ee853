package chart_test

import (
	"testing"

	"github.com/nriwasm/nriwasm/policies/topologyaware"
)

// TestDRAEnabledIsOneSwitch: --set dra.enabled=true alone makes the
// topology-aware policy publish devices (its own dra.enabled, parsed by the
// policy itself, is on) and keeps the rest of the policy's configuration; a
// policy configuration that decides itself, an unset dra.enabled and other
// policies are left as they are.
func TestDRAEnabledIsOneSwitch(t *testing.T) {
	for _, c := range []struct {
		name    string
		values  map[string]any
		wantDRA bool
		// wantCPU is the reserved CPU the policy parses, in milli-CPUs.
		wantCPU int64
	}{
		{name: "dra.enabled alone", values: map[string]any{"dra": map[string]any{"enabled": true}}, wantDRA: true, wantCPU: 750},
		{name: "with a policy configuration", values: map[string]any{"dra": map[string]any{"enabled": true},
			"policy": map[string]any{"config": map[string]any{"reservedResources": map[string]any{"cpu": "1"}}}}, wantDRA: true, wantCPU: 1000},
		{name: "the policy's own dra.enabled wins", values: map[string]any{"dra": map[string]any{"enabled": true},
			"policy": map[string]any{"config": map[string]any{"dra": map[string]any{"enabled": false}}}}, wantDRA: false, wantCPU: 750},
		{name: "dra.enabled unset", values: nil, wantDRA: false, wantCPU: 750},
		{name: "dra.enabled false", values: map[string]any{"dra": map[string]any{"enabled": false}}, wantDRA: false, wantCPU: 750},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustRender(t, c.values)
			cfg, err := topologyaware.ParseConfig(r.config.Policy.Data)
			if err != nil {
				t.Fatalf("the policy refuses its rendered configuration %s: %v", r.config.Policy.Data, err)
			}
			if cfg.DRA != c.wantDRA || cfg.ReservedCPU.Milli != c.wantCPU {
				t.Errorf("policy configuration %s: dra.enabled %v, reserved %dm; want %v, %dm",
					r.config.Policy.Data, cfg.DRA, cfg.ReservedCPU.Milli, c.wantDRA, c.wantCPU)
			}
		})
	}
	// balloons decides per balloon type (publishDRADevices): its
	// configuration is passed on untouched.
	r := mustRender(t, map[string]any{"dra": map[string]any{"enabled": true}, "policy": map[string]any{"name": "balloons"}})
	if r.config.Policy.Data != nil {
		t.Errorf("balloons got a configuration it was not given: %s", r.config.Policy.Data)
	}
}
