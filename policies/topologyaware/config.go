package topologyaware

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/quantity"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// Config is the policy's configuration, with nri-plugins' field names.
type Config struct {
	// ReservedCPU is reservedResources.cpu: the CPUs of kube-system and the
	// reservedPoolNamespaces. Default 750m, as nri-plugins' Helm chart.
	ReservedCPU quantity.CPUAmount
	// AvailableCPU is availableResources.cpu: the CPUs the policy hands out.
	// Absent means every online CPU.
	AvailableCPU quantity.CPUAmount
	// ReservedPoolNamespaces are namespace globs (path.Match) placed on the
	// reserved CPUs, besides kube-system.
	ReservedPoolNamespaces []string
	// PreferIsolatedCPUs: single-CPU exclusive grants take kernel-isolated
	// CPUs first. Default true.
	PreferIsolatedCPUs bool
	// PreferSharedCPUs: containers get shared CPUs unless annotated otherwise.
	PreferSharedCPUs bool
	// PinCPU: answer cpuset_cpus. Default true.
	PinCPU bool
	// PinMemory: answer cpuset_mems. Default true.
	PinMemory bool
	// UnlimitedBurstable is the topology level ("system", "package", "die",
	// "numa") whose pools Burstable containers without a CPU limit prefer.
	// Default "package", as nri-plugins' CRD.
	UnlimitedBurstable string
	// ColocatePods gives each container without affinity annotations an
	// affinity of weight 10 to the other containers of its pod, as
	// nri-plugins' colocatePods. Default false.
	ColocatePods bool
	// ColocateNamespaces gives each container without affinity annotations
	// an affinity of weight 10 to the containers of its namespace, as
	// nri-plugins' colocateNamespaces. Default false.
	ColocateNamespaces bool
	// DefaultCPUPriority is defaultCPUPriority: the CPU priority (high,
	// normal, low, none) a container prefers when not annotated with
	// prefer-cpu-priority. Default none, as nri-plugins' CRD.
	DefaultCPUPriority cpuPrio
	// DRA is dra.enabled (ours, not nri-plugins'): publish one DRA device
	// per NUMA node and allocate CPU claims. Default false.
	DRA bool
}

// DefaultConfig is the configuration an empty config means.
func DefaultConfig() Config {
	return Config{
		ReservedCPU:        quantity.CPUAmount{Kind: quantity.Quantity, Milli: 750},
		PreferIsolatedCPUs: true,
		PinCPU:             true,
		PinMemory:          true,
		UnlimitedBurstable: "package",
		DefaultCPUPriority: prioNone,
	}
}

// document is the configuration as written: nri-plugins' TopologyAwarePolicy
// spec (pkg/apis/config/v1alpha1/resmgr/policy/topologyaware), with ours
// (dra) added.
type document struct {
	ReservedResources      resourcesDoc `json:"reservedResources"`
	AvailableResources     resourcesDoc `json:"availableResources"`
	ReservedPoolNamespaces []string     `json:"reservedPoolNamespaces"`
	PreferIsolatedCPUs     *bool        `json:"preferIsolatedCPUs"`
	PreferSharedCPUs       *bool        `json:"preferSharedCPUs"`
	PinCPU                 *bool        `json:"pinCPU"`
	PinMemory              *bool        `json:"pinMemory"`
	UnlimitedBurstable     *levelName   `json:"unlimitedBurstable"`
	ColocatePods           *bool        `json:"colocatePods"`
	ColocateNamespaces     *bool        `json:"colocateNamespaces"`
	DefaultCPUPriority     *prioDoc     `json:"defaultCPUPriority"`
	DRA                    draDoc       `json:"dra"`
}

type resourcesDoc struct {
	CPU *quantity.CPUAmount `json:"cpu"`
}

type draDoc struct {
	Enabled *bool `json:"enabled"`
}

// IgnoredFields implements policyconfig.Ignorer: nri-plugins' fields that do
// not change a placement.
func (document) IgnoredFields() map[string]string {
	return map[string]string{
		"agent":                  "the node agent's NodeResourceTopology and pod-resources settings are nri-plugins' own; nriwasm's agent is configured by its flags",
		"control":                "RDT, block I/O and CPU-frequency control are not applied by this policy; placement is unchanged",
		"controllableInterrupts": "IRQ affinity is not steered by this policy; placement is unchanged",
		"instrumentation":        "nriwasm's agent serves its own metrics (see its --metrics flags)",
		"log":                    "the policy logs through nriwasm's agent log",
	}
}

// RestrictedFields implements policyconfig.Restricter: nri-plugins' fields
// accepted at the values this policy behaves like.
func (document) RestrictedFields() map[string]policyconfig.Restriction {
	none := func(why string, accept ...any) policyconfig.Restriction {
		return policyconfig.Restriction{Accept: accept, Why: why}
	}
	return map[string]policyconfig.Restriction{
		"cpuClasses":                 none("CPU classes (frequency and uncore limits) are not applied", []any{}),
		"sharedPoolCPUClass":         none("CPU classes are not applied", ""),
		"reservedPoolCPUClass":       none("CPU classes are not applied", ""),
		"defaultExclusiveCPUClass":   none("CPU classes are not applied", ""),
		"schedulingClasses":          none("scheduling classes (policy, nice, I/O priority) are not applied", []any{}),
		"namespaceSchedulingClasses": none("scheduling classes are not applied", map[string]any{}),
		"podQoSSchedulingClasses":    none("scheduling classes are not applied", map[string]any{}),
	}
}

// UnsupportedFields implements policyconfig.Unsupporter.
func (resourcesDoc) UnsupportedFields() map[string]string {
	return map[string]string{"memory": "memory reservations are not supported by this policy"}
}

// levelName is a topology level of unlimitedBurstable.
type levelName string

// UnmarshalJSON implements json.Unmarshaler, accepting nri-plugins' levels
// that this policy's pool tree has.
func (l *levelName) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a topology level, got %s", b)
	}
	if _, ok := levelByName(s); !ok {
		return fmt.Errorf("%q: want system, package, die, numa or l3cache", s)
	}
	*l = levelName(s)
	return nil
}

// liveError is Reconfigure's refusal of a valid configuration that the
// running containers keep from applying live (a grant or claim holds CPUs it
// takes away, a container no longer fits): FAILED_PRECONDITION, naming the
// field, so the host may apply it by a swap instead.
func liveError(field, format string, args ...any) error {
	return abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "config"+field, format, args...)
}

// ParseConfig parses a configuration in YAML or JSON, logging a warning for
// each nri-plugins field it accepts but ignores. Unknown fields are errors;
// every error is INVALID_ARGUMENT and names the field
// ("config.reservedResources.cpu"), every refused field in one error (the
// namespace globs are checked once the rest decodes). It checks the
// configuration's own shape; resolve checks it against the topology.
func ParseConfig(raw []byte) (Config, error) {
	var doc document
	if err := policyconfig.Decode(raw, &doc); err != nil {
		return Config{}, err
	}
	cfg := DefaultConfig()
	if c := doc.ReservedResources.CPU; c != nil {
		cfg.ReservedCPU = *c
	}
	if c := doc.AvailableResources.CPU; c != nil {
		cfg.AvailableCPU = *c
	}
	// Checked after Decode, which fills doc only when it refused nothing
	// (it leaves its target alone on error, policyconfig.DecodeWarnings),
	// so a bad glob is reported once the document decodes: every bad one,
	// in one error.
	var errs policyconfig.Errors
	for i, g := range doc.ReservedPoolNamespaces {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			errs.Add(policyconfig.Path(policyconfig.Root, "reservedPoolNamespaces", i), "bad namespace glob %q", g)
		}
	}
	if err := errs.Err(); err != nil {
		return Config{}, err
	}
	cfg.ReservedPoolNamespaces = doc.ReservedPoolNamespaces
	for _, b := range []struct {
		in  *bool
		out *bool
	}{
		{doc.PreferIsolatedCPUs, &cfg.PreferIsolatedCPUs}, {doc.PreferSharedCPUs, &cfg.PreferSharedCPUs},
		{doc.PinCPU, &cfg.PinCPU}, {doc.PinMemory, &cfg.PinMemory}, {doc.DRA.Enabled, &cfg.DRA},
		{doc.ColocatePods, &cfg.ColocatePods}, {doc.ColocateNamespaces, &cfg.ColocateNamespaces},
	} {
		if b.in != nil {
			*b.out = *b.in
		}
	}
	if doc.DefaultCPUPriority != nil {
		cfg.DefaultCPUPriority = cpuPrio(*doc.DefaultCPUPriority)
	}
	if doc.UnlimitedBurstable != nil {
		cfg.UnlimitedBurstable = string(*doc.UnlimitedBurstable)
	}
	return cfg, nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
