package balloons_test

import (
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/validate"
	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/sdk/go/kit/quantity"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// TestParseConfigErrors: every bad configuration is INVALID_ARGUMENT naming
// the field, with a message that says what is wrong.
func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct{ cfg, field, msg string }{
		{"balloonType: []", "config.balloonType", "unknown field"},
		{"balloonTypes: [{name: a, minCPU: 1}]", "config.balloonTypes[0].minCPU", "unknown field"},
		{"balloonTypes: [{name: a, loads: [avx]}]", "config.balloonTypes[0].loads", "not supported"},
		{"turboDomain: system", "config.turboDomain", `"system" is not supported (accepted: "package")`},
		// Every refused field in one error, the first one's path as its field.
		{"loadClasses: [{name: avx}]\nschedulingClasses: [{name: rt}]\nballoonTypes: [{name: a, irqMode: isolate, minCPU: 1}]\nagent: {}",
			"config.balloonTypes[0].irqMode", "(and 3 more: config.balloonTypes[0].minCPU: unknown field"},
		{"schedulingClasses: [{name: rt}]", "config.schedulingClasses", "not supported"},
		{"balloonTypes: [{name: a, irqMode: sink}]", "config.balloonTypes[0].irqMode", `"sink" is not supported (accepted: "")`},
		// A device we cannot use is refused with the other refused fields.
		{"loadClasses: [{name: avx}]\nballoonTypes: [{name: a, preferCloseToDevices: [/sys/class/net/eth0, podresourceapi:nvidia.com/gpu], schedulingClass: rt}]",
			"config.balloonTypes[0].preferCloseToDevices[1]", `(and 2 more: config.balloonTypes[0].schedulingClass: "rt" is not supported`},
		{"balloonTypes: [{name: a}, {name: a}]", "config.balloonTypes[1].name", "balloonTypes[0]"},
		{"balloonTypes: [{minCPUs: 1}]", "config.balloonTypes[0].name", "required"},
		{"balloonTypes: [{name: a, minCPUs: -1}]", "config.balloonTypes[0].minCPUs", "0 or more"},
		{"balloonTypes: [{name: a, maxCPUs: -2}]", "config.balloonTypes[0].maxCPUs", "-1"},
		{"balloonTypes: [{name: a, minCPUs: 3, maxCPUs: 2}]", "config.balloonTypes[0].minCPUs", "above maxCPUs"},
		{"balloonTypes: [{name: a, minBalloons: 3, maxBalloons: 2}]", "config.balloonTypes[0].minBalloons", "above maxBalloons"},
		{"balloonTypes: [{name: a, minCPUs: x}]", "config.balloonTypes[0].minCPUs", "want an integer"},
		{"balloonTypes: [{name: a, allocatorPriority: urgent}]", "config.balloonTypes[0].allocatorPriority", "high, normal, low, none"},
		{"balloonTypes: [{name: a, shareIdleCPUsInSame: rack}]", "config.balloonTypes[0].shareIdleCPUsInSame", "numa"},
		{"balloonTypes: [{name: a, preferCoreType: fast}]", "config.balloonTypes[0].preferCoreType", "performance"},
		{"balloonTypes: [{name: a, memoryTypes: [SRAM]}]", "config.balloonTypes[0].memoryTypes[0]", "DRAM"},
		{"balloonTypes: [{name: a, namespaces: ['[']}]", "config.balloonTypes[0].namespaces[0]", "glob"},
		{"balloonTypes: [{name: a, matchExpressions: [{key: name, operator: Like, values: [x]}]}]", "config.balloonTypes[0].matchExpressions[0].operator", "Equals"},
		{"balloonTypes: [{name: a, matchExpressions: [{key: color, operator: Exists}]}]", "config.balloonTypes[0].matchExpressions[0].key", "pod/labels/KEY"},
		{"balloonTypes: [{name: a, matchExpressions: [{key: name, operator: Equals}]}]", "config.balloonTypes[0].matchExpressions[0].values", "takes 1 values"},
		{"balloonTypes: [{name: a, groupBy: '${pod/colour}'}]", "config.balloonTypes[0].groupBy", "unknown key"},
		{"balloonTypes: [{name: a, preferCloseToDevices: [podresourceapi:nvidia.com/gpu]}]", "config.balloonTypes[0].preferCloseToDevices[0]", "not supported"},
		{"balloonTypes: [{name: a, preferCloseToDevices: [/sys/kernel/mm]}]", "config.balloonTypes[0].preferCloseToDevices[0]", "/sys/class/net/IFACE"},
		{"balloonTypes: [{name: a, components: [{balloonType: b}]}]", "config.balloonTypes[0].components[0].balloonType", "no balloon type"},
		{"balloonTypes: [{name: a, components: [{balloonType: a}]}]", "config.balloonTypes[0].components[0].balloonType", "its own component"},
		{"balloonTypes: [{name: a, componentCreation: all}]", "config.balloonTypes[0].componentCreation", "needs components"},
		{"balloonTypes: [{name: a, components: [{balloonType: b}]}, {name: b, components: [{balloonType: c}]}, {name: c, components: [{balloonType: a}]}]",
			"config.balloonTypes[0].components[0].balloonType", "a → b → c → a"},
		{"balloonTypes: [{name: a, components: [{balloonType: b}], preferIsolCpus: true, preferCloseToDevices: [/sys/devices/system/node/node0]}, {name: b}]",
			"config.balloonTypes[0].preferCloseToDevices", "preferCloseToDevices, preferIsolCpus on the component types"},
		{"balloonTypes: [{name: a, components: [{balloonType: b}]}, {name: b, publishDRADevices: true, maxBalloons: 1, minCPUs: 1, maxCPUs: 1}]",
			"config.balloonTypes[0].components[0].balloonType", "publishes DRA devices"},
		{"reservedResources: {cpu: 'cpuset:0'}\nballoonTypes: [{name: reserved, components: [{balloonType: b}]}, {name: b}]",
			"config.reservedResources.cpu", "composite reserved"},
		// cpuClass is ignored, but as nri-plugins a composite type may not have one.
		{"balloonTypes: [{name: b}, {name: a, cpuClass: turbo, components: [{balloonType: b}]}]", "config.balloonTypes[1].cpuClass", "composite balloon type cannot have a CPU class"},
		{"balloonTypes: [{name: a, publishDRADevices: true, maxCPUs: 2, minCPUs: 1}]", "config.balloonTypes[0].maxBalloons", "maxBalloons ≥ 1"},
		{"balloonTypes: [{name: a, publishDRADevices: true, maxBalloons: 2, minCPUs: 1}]", "config.balloonTypes[0].maxCPUs", "maxCPUs ≥ 1"},
		{"balloonTypes: [{name: reserved, publishDRADevices: true}]", "config.balloonTypes[0].publishDRADevices", "reserved"},
		{"balloonTypes: [{name: " + strings.Repeat("x", 65) + ", publishDRADevices: true, maxBalloons: 1, minCPUs: 1, maxCPUs: 1}]", "config.balloonTypes[0].name", "at most 64"},
		{"availableResources: {cpu: 4}", "config.availableResources.cpu", "not a quantity"},
		{"reservedResources: {cpu: lots}", "config.reservedResources.cpu", "not a number"},
		{"pinCPU: yes please", "config.pinCPU", "true or false"},
	} {
		_, err := balloons.ParseConfig([]byte(tc.cfg))
		policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, tc.field)
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: %v, want a message with %q", tc.cfg, err, tc.msg)
		}
	}
}

// TestParseConfigEveryRefusal: a configuration with several refused
// fields is refused in one INVALID_ARGUMENT error whose field is the first
// refused and whose message names every other, the refusals of values after
// those of decoding; a value decoding refused (left at its default) adds no
// refusal of its own, nor of the fields that read it.
func TestParseConfigEveryRefusal(t *testing.T) {
	for _, tc := range []struct {
		name, cfg, field, msg string
	}{
		{"values of several types and a glob",
			"reservedPoolNamespaces: ['[bad']\nballoonTypes: [{name: a, minCPUs: -1}, {name: b, maxBalloons: -2}]",
			"config.reservedPoolNamespaces[0]", `bad namespace glob "[bad" (and 2 more: ` +
				`config.balloonTypes[0].minCPUs: -1: want 0 or more; config.balloonTypes[1].maxBalloons: -2: want 0 (no limit) or more)`},
		{"decoding's refusals first, then the values'",
			"turboDomain: system\npreserve: {matchExpressions: [{key: name, operator: Like, values: [x]}, {key: color, operator: Exists}]}\n" +
				"balloonTypes: [{name: a, loads: [avx], minCPUs: 3, maxCPUs: 2}, {name: b, componentCreation: all, namespaces: [ok, '']}]",
			"config.balloonTypes[0].loads", `["avx"] is not supported (accepted: []): this policy does not implement it (and 6 more: ` +
				`config.turboDomain: "system" is not supported (accepted: "package"): turbo arbitration needs cpuClasses, which this policy does not implement; ` +
				`config.preserve.matchExpressions[0].operator: "Like": want one of AlwaysTrue, Equals, Exists, In, Matches, MatchesAny, MatchesNone, MatchesNot, NotEqual, NotExist, NotIn; ` +
				`config.preserve.matchExpressions[1].key: "color": want name, namespace, qosclass, id, labels/KEY, pod/name, pod/namespace, pod/qosclass, pod/id, pod/uid or pod/labels/KEY; ` +
				`config.balloonTypes[0].minCPUs: 3 is above maxCPUs 2; config.balloonTypes[1].componentCreation: needs components; ` +
				`config.balloonTypes[1].namespaces[1]: bad namespace glob "")`},
		// Not refused again: [b] as a name, nor the component naming b;
		// componentCreation without the refused components; maxBalloons
		// as a device's count; the name of a type that is not an object.
		{"no refusal of what decoding refused",
			"balloonTypes: [{name: [b]}, {name: a, components: [{balloonType: b}], componentCreation: all}, " +
				"{name: c, components: x, componentCreation: all, maxBalloons: many, publishDRADevices: true, minCPUs: 1, maxCPUs: 1}, 3, {minCPUs: -1}]",
			"config.balloonTypes[0].name", `want a string, got a list (and 5 more: ` +
				`config.balloonTypes[2].components: want a list, got the string "x"; ` +
				`config.balloonTypes[2].maxBalloons: want an integer, got the string "many"; ` +
				`config.balloonTypes[3]: want an object, got the number 3; ` +
				`config.balloonTypes[4].name: required; config.balloonTypes[4].minCPUs: -1: want 0 or more)`},
		// A type that cannot be a device is refused for that alone.
		{"devices",
			"balloonTypes: [{name: d, publishDRADevices: true}, {name: reserved, publishDRADevices: true}, {name: e, components: [{balloonType: d}], publishDRADevices: true}]",
			"config.balloonTypes[0].maxBalloons", `publishDRADevices needs maxBalloons ≥ 1: one device per instance (and 5 more: ` +
				`config.balloonTypes[0].maxCPUs: publishDRADevices needs maxCPUs ≥ 1: the device's cpu capacity; ` +
				`config.balloonTypes[0].minCPUs: publishDRADevices needs minCPUs ≥ 1: a device's instance has CPUs from Init on; ` +
				`config.balloonTypes[1].publishDRADevices: the reserved balloon cannot be a DRA device; ` +
				`config.balloonTypes[2].components[0].balloonType: "d" publishes DRA devices: its instances are claimed, not parts; ` +
				`config.balloonTypes[2].publishDRADevices: composite balloons cannot be DRA devices)`},
		{"names, components and classes",
			"reservedResources: {cpu: 'cpuset:0'}\nballoonTypes: [{name: reserved, cpuClass: x, components: [{balloonType: nope}, {balloonType: reserved}, {balloonType: b}], preferIsolCpus: true}, " +
				"{name: b, components: [{balloonType: reserved}]}, null, {name: b}, {}]",
			"config.balloonTypes[2]", `want a balloon type, got null (and 9 more: ` +
				`config.balloonTypes[3].name: "b" is also balloonTypes[1]; config.balloonTypes[4].name: required; ` +
				`config.balloonTypes[0].components[0].balloonType: no balloon type "nope"; ` +
				`config.balloonTypes[0].components[1].balloonType: a balloon type cannot be its own component; ` +
				`config.balloonTypes[0].components[2].balloonType: "b" is composed of reserved again: reserved → b → reserved; ` +
				`config.balloonTypes[0].preferIsolCpus: a composite balloon type's CPUs are its components': set preferIsolCpus on the component types; ` +
				`config.reservedResources.cpu: a cpuset cannot size a composite reserved balloon type (balloonTypes[0]): give a quantity; ` +
				`config.balloonTypes[1].components[0].balloonType: "reserved" is composed of b again: b → reserved → b; ` +
				`config.balloonTypes[0].cpuClass: a composite balloon type cannot have a CPU class (nri-plugins refuses it): set it on the component types)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := balloons.ParseConfig([]byte(tc.cfg))
			policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, tc.field)
			if got, want := err.Error(), "INVALID_ARGUMENT: "+tc.field+": "+tc.msg; got != want {
				t.Errorf("error\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestEmptyClassesAccepted: the classes, loads, scheduling class and
// interrupts this policy cannot honour are accepted empty (they ask for
// nothing), with no warning, as nri-plugins' Helm values may write them.
func TestEmptyClassesAccepted(t *testing.T) {
	_, warnings, err := balloons.ParseConfigWarnings([]byte(`
cpuClasses: []
loadClasses: []
schedulingClasses: []
balloonTypes:
- name: a
  loads: []
  schedulingClass: ""
  irqClaim: []
  irqMode: ""
`))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("error %v, warnings %v; want neither", err, warnings)
	}
}

// TestParseConfigFull: every field of nri-plugins' balloonTypes decodes.
func TestParseConfigFull(t *testing.T) {
	cfg, err := balloons.ParseConfig([]byte(`
reservedResources: {cpu: "cpuset:0-1"}
availableResources: {cpu: "exclude-cpuset:63"}
reservedPoolNamespaces: [monitoring, "infra-*"]
allocatorTopologyBalancing: true
preferSpreadOnPhysicalCores: true
pinCPU: true
pinMemory: false
preserve: {matchExpressions: [{key: name, operator: In, values: [debugger]}]}
balloonTypes:
- name: full
  namespaces: [prod]
  matchExpressions: [{key: pod/labels/app, operator: Equals, values: [db]}]
  minCPUs: 2
  maxCPUs: 8
  minBalloons: 1
  maxBalloons: 4
  allocatorPriority: high
  preferNewBalloons: true
  preferSpreadingPods: true
  preferPerNamespaceBalloon: true
  groupBy: ${pod/labels/app}-${namespace}
  shareIdleCPUsInSame: l2cache
  preferCloseToDevices: [/sys/class/net/eth0]
  preferIsolCpus: true
  preferCoreType: efficient
  preferSpreadOnPhysicalCores: false
  allocatorTopologyBalancing: false
  hideHyperthreads: true
  pinMemory: true
  memoryTypes: [DRAM, HBM]
- name: part
- name: comp
  components: [{balloonType: full}, {balloonType: part}]
  componentCreation: balance-balloons
`))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.BalloonTypes[0]
	if b.MaxCPUs != 8 || b.GroupBy != "${pod/labels/app}-${namespace}" || b.ShareIdleCPUsInSame != balloons.LevelL2Cache || *b.HideHyperthreads != true ||
		len(cfg.BalloonTypes[2].Components) != 2 || cfg.ReservedResources.CPU.Set.String() != "0-1" || cfg.AvailableResources.CPU.Kind != quantity.ExcludeCPUSet {
		t.Errorf("decoded %+v / %+v", cfg, b)
	}
}

// TestDevicesValid: the devices pass the host's checks against the DRA
// API's limits, long type names included.
func TestDevicesValid(t *testing.T) {
	long := strings.Repeat("Very_Long.Name", 4)
	h := mustOpen(t, nativeOpen, "Server4Socket144CPU", "balloonTypes:\n- name: "+long+"\n  publishDRADevices: true\n  minCPUs: 2\n  maxCPUs: 16\n  maxBalloons: 12\n  allocatorTopologyBalancing: true\n")
	resp, err := h.Client.Devices(context.Background(), &abi.DevicesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Devices(resp); err != nil {
		t.Errorf("devices invalid: %v", err)
	}
	if len(resp.Devices) != 12 {
		t.Fatalf("%d devices, want 12", len(resp.Devices))
	}
	sockets := map[int64]bool{}
	for _, d := range resp.Devices {
		if len(d.Name) > 63 || d.Capacities["cpu"].Value != "16" || d.Attributes["balloonType"].GetStringValue() != long {
			t.Errorf("device %v", d)
		}
		sockets[d.Attributes["socket"].GetIntValue()] = true
	}
	if len(sockets) != 4 {
		t.Errorf("allocatorTopologyBalancing spread 12 instances over sockets %v, want all 4", sockets)
	}
}

// nriPluginsFields are the JSON field names of containers/nri-plugins'
// balloons configuration (pkg/apis/config/v1alpha1/resmgr/policy/balloons,
// Config and BalloonDef, as of commit 0705acc), with a configuration that
// sets each and the path of the refusal ("" where the field decodes). The
// spec-level agent, control, log and instrumentation sit beside Config in
// BalloonsPolicySpec.
// nriPluginsFields: want is "" (decoded), "ignored:PATH" (accepted with a
// warning naming PATH) or "refused:PATH".
var nriPluginsFields = []struct {
	field, cfg, want string
}{
	{"pinCPU", "pinCPU: false", ""},
	{"pinMemory", "pinMemory: false", ""},
	{"idleCPUClass", "idleCPUClass: idle", "ignored:config.idleCPUClass"},
	{"reservedPoolNamespaces", "reservedPoolNamespaces: [monitoring]", ""},
	{"allocatorTopologyBalancing", "allocatorTopologyBalancing: true", ""},
	{"preferSpreadOnPhysicalCores", "preferSpreadOnPhysicalCores: true", ""},
	{"balloonTypes", "balloonTypes: [{name: a}]", ""},
	{"availableResources", "availableResources: {cpu: \"cpuset:0-3\"}", ""},
	{"availableResources.memory", "availableResources: {memory: 1Gi}", "ignored:config.availableResources.memory"},
	{"reservedResources", "reservedResources: {cpu: 1500m}", ""},
	{"reservedResources.memory", "reservedResources: {cpu: 1, memory: 1Gi}", "ignored:config.reservedResources.memory"},
	{"preserve", "preserve: {matchExpressions: [{key: name, operator: In, values: [debugger]}]}", ""},
	{"showContainersInNrt", "showContainersInNrt: true", "ignored:config.showContainersInNrt"},
	{"loadClasses", "loadClasses: [{name: avx, level: core}]", "refused:config.loadClasses"},
	{"schedulingClasses", "schedulingClasses: [{name: rt, policy: fifo}]", "refused:config.schedulingClasses"},
	{"cpuClasses", "cpuClasses: [{name: turbo}]", "refused:config.cpuClasses"},
	{"turboDomain", "turboDomain: package", ""},
	{"turboDomain.system", "turboDomain: system", "refused:config.turboDomain"},
	{"controllableInterrupts", "controllableInterrupts: [\"10-20\"]", "ignored:config.controllableInterrupts"},
	{"agent", "agent: {nodeResourceTopology: true, podResourceAPI: false}", "ignored:config.agent"},
	{"control", "control: {}", "ignored:config.control"},
	{"log", "log: {debug: [policy]}", "ignored:config.log"},
	{"instrumentation", "instrumentation: {prometheusExport: true}", "ignored:config.instrumentation"},

	{"balloonTypes.name", "balloonTypes: [{name: a}]", ""},
	{"balloonTypes.components", "balloonTypes: [{name: a, components: [{balloonType: b}]}, {name: b}]", ""},
	{"balloonTypes.componentCreation", "balloonTypes: [{name: a, components: [{balloonType: b}], componentCreation: balance-balloons}, {name: b}]", ""},
	{"balloonTypes.namespaces", "balloonTypes: [{name: a, namespaces: [prod]}]", ""},
	{"balloonTypes.groupBy", "balloonTypes: [{name: a, groupBy: '${pod/labels/app}'}]", ""},
	{"balloonTypes.matchExpressions", "balloonTypes: [{name: a, matchExpressions: [{key: name, operator: Equals, values: [x]}]}]", ""},
	{"balloonTypes.maxCPUs", "balloonTypes: [{name: a, maxCPUs: 4}]", ""},
	{"balloonTypes.minCPUs", "balloonTypes: [{name: a, minCPUs: 1}]", ""},
	{"balloonTypes.memoryTypes", "balloonTypes: [{name: a, memoryTypes: [DRAM, PMEM]}]", ""},
	{"balloonTypes.pinMemory", "balloonTypes: [{name: a, pinMemory: false}]", ""},
	{"balloonTypes.allocatorPriority", "balloonTypes: [{name: a, allocatorPriority: low}]", ""},
	{"balloonTypes.preferSpreadOnPhysicalCores", "balloonTypes: [{name: a, preferSpreadOnPhysicalCores: true}]", ""},
	{"balloonTypes.hideHyperthreads", "balloonTypes: [{name: a, hideHyperthreads: true}]", ""},
	{"balloonTypes.allocatorTopologyBalancing", "balloonTypes: [{name: a, allocatorTopologyBalancing: true}]", ""},
	{"balloonTypes.cpuClass", "balloonTypes: [{name: a, cpuClass: turbo}]", "ignored:config.balloonTypes[0].cpuClass"},
	{"balloonTypes.cpuClass.composite", "balloonTypes: [{name: a, components: [{balloonType: b}]}, {name: b, cpuClass: turbo}]", "ignored:config.balloonTypes[1].cpuClass"},
	{"balloonTypes.loads", "balloonTypes: [{name: a, loads: [avx]}]", "refused:config.balloonTypes[0].loads"},
	{"balloonTypes.minBalloons", "balloonTypes: [{name: a, minBalloons: 1}]", ""},
	{"balloonTypes.maxBalloons", "balloonTypes: [{name: a, maxBalloons: 2}]", ""},
	{"balloonTypes.preferSpreadingPods", "balloonTypes: [{name: a, preferSpreadingPods: true}]", ""},
	{"balloonTypes.preferPerNamespaceBalloon", "balloonTypes: [{name: a, preferPerNamespaceBalloon: true}]", ""},
	{"balloonTypes.preferNewBalloons", "balloonTypes: [{name: a, preferNewBalloons: true}]", ""},
	{"balloonTypes.shareIdleCPUsInSame", "balloonTypes: [{name: a, shareIdleCPUsInSame: die}]", ""},
	{"balloonTypes.preferCloseToDevices", "balloonTypes: [{name: a, preferCloseToDevices: [/sys/devices/system/cpu/cpu0/cache/index3]}]", ""},
	{"balloonTypes.preferIsolCpus", "balloonTypes: [{name: a, preferIsolCpus: true}]", ""},
	{"balloonTypes.preferCoreType", "balloonTypes: [{name: a, preferCoreType: efficient}]", ""},
	{"balloonTypes.schedulingClass", "balloonTypes: [{name: a, schedulingClass: rt}]", "refused:config.balloonTypes[0].schedulingClass"},
	{"balloonTypes.showContainersInNrt", "balloonTypes: [{name: a, showContainersInNrt: true}]", "ignored:config.balloonTypes[0].showContainersInNrt"},
	{"balloonTypes.irqClaim", "balloonTypes: [{name: a, irqClaim: [\"10\"]}]", "refused:config.balloonTypes[0].irqClaim"},
	{"balloonTypes.irqMode", "balloonTypes: [{name: a, irqMode: isolate}]", "refused:config.balloonTypes[0].irqMode"},
}

// TestNRIPluginsFields: every field of nri-plugins' balloons configuration
// decodes, or is accepted with a warning naming it, or is refused by its
// path as "not supported" or at a value it cannot honour, never as an
// unknown field; and every field this policy decodes is one of
// nri-plugins' or one of ours (publishDRADevices).
func TestNRIPluginsFields(t *testing.T) {
	listed := map[string]bool{}
	for _, tc := range nriPluginsFields {
		field, _, _ := strings.Cut(tc.field, ".system")
		listed[field] = true
		t.Run(tc.field, func(t *testing.T) {
			_, warnings, err := balloons.ParseConfigWarnings([]byte(tc.cfg))
			kind, path, _ := strings.Cut(tc.want, ":")
			switch kind {
			case "":
				if err != nil || len(warnings) > 0 {
					t.Fatalf("%s: %v, warnings %v", tc.cfg, err, warnings)
				}
			case "ignored":
				if err != nil || len(warnings) != 1 || warnings[0].Field != path {
					t.Fatalf("%s: %v, warnings %v; want one warning for %s", tc.cfg, err, warnings, path)
				}
			case "refused":
				policytest.WantError(t, err, abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, path)
				if !strings.Contains(err.Error(), "not supported") {
					t.Fatalf("%s: %v, want \"not supported\"", tc.cfg, err)
				}
			}
		})
	}
	ours := map[string]bool{"balloonTypes.publishDRADevices": true}
	for prefix, typ := range map[string]reflect.Type{"": reflect.TypeFor[balloons.Config](), "balloonTypes.": reflect.TypeFor[balloons.BalloonType]()} {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && !listed[prefix+name] && !ours[prefix+name] {
				t.Errorf("field %s%s is neither nri-plugins' nor listed as ours", prefix, name)
			}
		}
	}
}

// TestHelmChartConfig: the configuration nri-plugins' Helm chart writes by
// default starts, with a warning for each field that changes no placement.
func TestHelmChartConfig(t *testing.T) {
	raw, err := os.ReadFile("testdata/nri-plugins-chart-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, warnings, err := balloons.ParseConfigWarnings(raw)
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	var got []string
	for _, w := range warnings {
		got = append(got, w.Field)
	}
	if want := []string{"config.agent", "config.control", "config.instrumentation", "config.log"}; !slices.Equal(got, want) {
		t.Errorf("warnings for %v, want %v", got, want)
	}
	h := mustOpen(t, nativeOpen, "Server2Socket4NodesInterleaved", string(raw))
	g := ctr("g", 2000)
	g.QOS = abi.QOSClass_QOS_CLASS_GUARANTEED
	h.Create(g)
	h.Create(ctr("b", 500))
	if gb, bb := h.balloonOf("g"), h.balloonOf("b"); gb != "dedicated-cpus[0]" || bb != "shared-local-cpus[0]" {
		t.Errorf("Guaranteed container in %s, Burstable in %s; want dedicated-cpus[0], shared-local-cpus[0]", gb, bb)
	}
}
