package topologyaware_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/kit/quantity"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

func TestParseConfig(t *testing.T) {
	def := topologyaware.DefaultConfig()
	tests := []struct {
		name, in string
		check    func(topologyaware.Config) bool
	}{
		{"empty", "", func(c topologyaware.Config) bool {
			return c.ReservedCPU.String() == def.ReservedCPU.String() && c.PinCPU && c.PinMemory && c.PreferIsolatedCPUs && !c.PreferSharedCPUs
		}},
		{"null", "null", func(c topologyaware.Config) bool { return c.ReservedCPU.Milli == 750 }},
		{"yaml", "reservedResources:\n  cpu: 2\npinCPU: false\npreferSharedCPUs: true\n", func(c topologyaware.Config) bool {
			return c.ReservedCPU.Kind == quantity.Quantity && c.ReservedCPU.Milli == 2000 && !c.PinCPU && c.PreferSharedCPUs
		}},
		{"json", `{"reservedResources":{"cpu":"cpuset:0-1"},"availableResources":{"cpu":"exclude-cpuset:15"},"preferIsolatedCPUs":false}`,
			func(c topologyaware.Config) bool {
				return c.ReservedCPU.Kind == quantity.CPUSet && c.ReservedCPU.Set.String() == "0-1" &&
					c.AvailableCPU.Kind == quantity.ExcludeCPUSet && c.AvailableCPU.String() == "exclude-cpuset:15" && !c.PreferIsolatedCPUs
			}},
		{"dra", "dra: {enabled: true}", func(c topologyaware.Config) bool { return c.DRA }},
		{"quantities", "reservedResources: {cpu: 0.5}", func(c topologyaware.Config) bool { return c.ReservedCPU.Milli == 500 }},
		{"milli", "reservedResources: {cpu: 1250m}", func(c topologyaware.Config) bool { return c.ReservedCPU.String() == "1250m" }},
		{"namespaces", "reservedPoolNamespaces: [infra, 'team-*']", func(c topologyaware.Config) bool {
			return len(c.ReservedPoolNamespaces) == 2 && c.ReservedPoolNamespaces[1] == "team-*"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := topologyaware.ParseConfig([]byte(tc.in))
			if err != nil || !tc.check(c) {
				t.Fatalf("ParseConfig(%q) = %+v, %v", tc.in, c, err)
			}
		})
	}
}

// TestBadConfig checks that each bad configuration is refused by Init and by
// Reconfigure (which keeps the old one) with an error naming the field.
func TestBadConfig(t *testing.T) {
	tests := []struct {
		name, machine, config, field string
	}{
		{"unknown field", "Desktop1Socket", "reservedResource:\n  cpu: 1\n", "config.reservedResource"},
		{"unknown nested field", "Desktop1Socket", "reservedResources:\n  cpus: 1\n", "config.reservedResources.cpus"},
		{"unsupported nri-plugins field", "Desktop1Socket", "sharedPoolCPUClass: turbo\n", "config.sharedPoolCPUClass"},
		{"cpu priority", "Desktop1Socket", "defaultCPUPriority: urgent\n", "config.defaultCPUPriority"},
		{"memory reservation", "Desktop1Socket", "reservedResources:\n  memory: 1G\n", "config.reservedResources.memory"},
		{"malformed cpuset", "Desktop1Socket", "reservedResources:\n  cpu: cpuset:0-x\n", "config.reservedResources.cpu"},
		{"reversed cpuset", "Desktop1Socket", "availableResources:\n  cpu: cpuset:7-3\n", "config.availableResources.cpu"},
		{"bad quantity", "Desktop1Socket", "reservedResources:\n  cpu: 1.5x\n", "config.reservedResources.cpu"},
		{"sub-milli quantity", "Desktop1Socket", "reservedResources:\n  cpu: 0.0005\n", "config.reservedResources.cpu"},
		{"zero reserved", "Desktop1Socket", "reservedResources:\n  cpu: 0\n", "config.reservedResources.cpu"},
		{"reserved offline", "Desktop1Socket", "reservedResources:\n  cpu: cpuset:16\n", "config.reservedResources.cpu"},
		{"reserved outside available", "Desktop1Socket", "availableResources:\n  cpu: cpuset:2-15\nreservedResources:\n  cpu: cpuset:0-1\n", "config.reservedResources.cpu"},
		{"reserved everything", "Desktop1Socket", "reservedResources:\n  cpu: cpuset:0-15\n", "config.reservedResources.cpu"},
		{"reserved quantity too big", "Desktop1Socket", "reservedResources:\n  cpu: 17\n", "config.reservedResources.cpu"},
		{"available offline", "Desktop1Socket", "availableResources:\n  cpu: cpuset:0-31\n", "config.availableResources.cpu"},
		{"available fraction", "Desktop1Socket", "availableResources:\n  cpu: 1500m\n", "config.availableResources.cpu"},
		{"exclude everything", "Desktop1Socket", "availableResources:\n  cpu: exclude-cpuset:0-15\n", "config.availableResources.cpu"},
		{"reserved isolated mix", "PMEM112CPUIsolated", "reservedResources:\n  cpu: cpuset:1-2\n", "config.reservedResources.cpu"},
		{"bool", "Desktop1Socket", "pinCPU: \"maybe\"\n", "config.pinCPU"},
		{"glob", "Desktop1Socket", "reservedPoolNamespaces: [ok, \"[bad\"]\n", "config.reservedPoolNamespaces[1]"},
		{"dra field", "Desktop1Socket", "dra:\n  enable: true\n", "config.dra.enable"},
		{"dra bool", "Desktop1Socket", "dra:\n  enabled: maybe\n", "config.dra.enabled"},
		{"dra not an object", "Desktop1Socket", "dra: true\n", "config.dra"},
		{"not an object", "Desktop1Socket", "- a\n- b\n", "config"},
		{"not yaml", "Desktop1Socket", "a: [1\n", "config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tryHarness(t, tc.machine, tc.config, nil)
			policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, tc.field)

			h := newHarness(t, tc.machine, "")
			h.Create(guaranteed("g", 2000))
			before := h.dumpRaw()
			_, err = h.Client.Reconfigure(context.Background(), &abi.ReconfigureRequest{Config: []byte(tc.config)})
			policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, tc.field)
			if after := h.dumpRaw(); string(after) != string(before) {
				t.Errorf("a refused Reconfigure changed the state:\n%s\n%s", before, after)
			}
		})
	}
}

// TestEveryRefusalInOneError: the namespace globs, and availableResources
// with reservedResources, are refused in one INVALID_ARGUMENT error whose
// field is the first refused and whose message names every other; with
// availableResources refused, a reservation is refused only for what no
// available set would fix. Init refuses as Reconfigure does.
func TestEveryRefusalInOneError(t *testing.T) {
	for _, tc := range []struct {
		name, config, field, msg string
	}{
		{"globs", "reservedPoolNamespaces: ['[a', ok, '', 'team-[b']\n", "config.reservedPoolNamespaces[0]",
			`bad namespace glob "[a" (and 2 more: config.reservedPoolNamespaces[2]: bad namespace glob ""; config.reservedPoolNamespaces[3]: bad namespace glob "team-[b")`},
		{"available and a reserved amount", "availableResources: {cpu: 'cpuset:0-31'}\nreservedResources: {cpu: 0}\n", "config.availableResources.cpu",
			`CPUs 16-31 are not online (online: 0-15) (and 1 more: config.reservedResources.cpu: some CPU must be reserved)`},
		{"available and a reserved cpuset", "availableResources: {cpu: 1500m}\nreservedResources: {cpu: 'cpuset:14-17'}\n", "config.availableResources.cpu",
			`1500m: available CPU must be a whole number of CPUs or a cpuset (and 1 more: config.reservedResources.cpu: CPUs 16-17 are not online (online: 0-15))`},
		// Whether these would be available is unknown: not refused.
		{"available only", "availableResources: {cpu: 'exclude-cpuset:0-15'}\nreservedResources: {cpu: 'cpuset:0-1'}\n", "config.availableResources.cpu",
			`leaves no CPU available`},
		{"reserved only", "availableResources: {cpu: 'cpuset:2-15'}\nreservedResources: {cpu: 'cpuset:0-1'}\n", "config.reservedResources.cpu",
			`CPUs 0-1 are not available (available: 2-15)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tryHarness(t, "Desktop1Socket", tc.config, nil)
			wantMessage(t, err, tc.field, tc.msg)
			h := newHarness(t, "Desktop1Socket", "")
			_, err = h.Client.Reconfigure(context.Background(), &abi.ReconfigureRequest{Config: []byte(tc.config)})
			wantMessage(t, err, tc.field, tc.msg)
		})
	}
}

// wantMessage checks that err is INVALID_ARGUMENT at field with message msg.
func wantMessage(t *testing.T, err error, field, msg string) {
	t.Helper()
	policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, field)
	if pe, _ := errors.AsType[*abi.PolicyError](err); pe.Message != msg {
		t.Errorf("message %q\nwant    %q", pe.Message, msg)
	}
}

// TestResolvedResources checks what the reserved and available settings pick.
func TestResolvedResources(t *testing.T) {
	tests := []struct {
		machine, config, available, reserved string
	}{
		{"Desktop1Socket", "", "0-15", "0"},
		{"Desktop1Socket", "reservedResources: {cpu: 2}", "0-15", "0,8"},
		{"Desktop1Socket", "reservedResources: {cpu: 1500m}", "0-15", "0,8"},
		// cpu8's sibling is unavailable: taking it keeps whole cores whole.
		{"Desktop1Socket", "availableResources: {cpu: cpuset:2-15}", "2-15", "8"},
		{"Desktop1Socket", "availableResources: {cpu: exclude-cpuset:0-1}\nreservedResources: {cpu: exclude-cpuset:3-15}", "2-15", "2"},
		{"Desktop1Socket", "availableResources: {cpu: 4}", "0-1,8-9", "0"},
		{"PMEM112CPUIsolated", "", "0-111", "0"},
		{"PMEM112CPUIsolated", "reservedResources: {cpu: cpuset:2}", "0-111", "2"},
	}
	for _, tc := range tests {
		t.Run(tc.machine+"/"+tc.config, func(t *testing.T) {
			d := newHarness(t, tc.machine, tc.config).dump()
			if d.Available != tc.available || d.Reserved != tc.reserved {
				t.Errorf("available %s, reserved %s; want %s, %s", d.Available, d.Reserved, tc.available, tc.reserved)
			}
			if !cpuset.MustParse(d.Reserved).IsSubsetOf(cpuset.MustParse(d.Available)) {
				t.Errorf("reserved outside available")
			}
		})
	}
}

// TestImpossibleRequest: a request larger than the node names the field.
func TestImpossibleRequest(t *testing.T) {
	for _, s := range []spec{guaranteed("huge", 64000), burstable("huge", 64000)} {
		h := newHarness(t, "Desktop1Socket", "")
		_, err := h.TryCreate(s)
		policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "container.resources.cpu_request_milli")
		h.check()
	}
}
