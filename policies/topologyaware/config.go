package topologyaware

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"sigs.k8s.io/yaml"
)

// Config is the policy's configuration, with nri-plugins' field names.
type Config struct {
	// ReservedCPU is reservedResources.cpu: the CPUs of kube-system and the
	// reservedPoolNamespaces. Default 750m, as nri-plugins' Helm chart.
	ReservedCPU CPUAmount
	// AvailableCPU is availableResources.cpu: the CPUs the policy hands out.
	// Absent means every online CPU.
	AvailableCPU CPUAmount
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
	// DRA is dra.enabled (ours, not nri-plugins'): publish one DRA device
	// per NUMA node and allocate CPU claims. Default false.
	DRA bool
}

// DefaultConfig is the configuration an empty config means.
func DefaultConfig() Config {
	return Config{
		ReservedCPU:        CPUAmount{Kind: AmountQuantity, Milli: 750},
		PreferIsolatedCPUs: true,
		PinCPU:             true,
		PinMemory:          true,
	}
}

// unsupported are nri-plugins' topology-aware fields this policy does not
// implement: refused by name, so a carried-over config fails clearly.
var unsupported = []string{
	"agent", "colocateNamespaces", "colocatePods", "control", "controllableInterrupts",
	"cpuClasses", "defaultCPUPriority", "defaultExclusiveCPUClass", "instrumentation",
	"log", "namespaceSchedulingClasses", "podQoSSchedulingClasses", "reservedPoolCPUClass",
	"schedulingClasses", "sharedPoolCPUClass", "unlimitedBurstable",
}

func configError(field, format string, args ...any) error {
	return abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "config"+field, format, args...)
}

// ParseConfig parses a configuration in YAML or JSON. Unknown fields are
// errors; every error is INVALID_ARGUMENT and names the field
// ("config.reservedResources.cpu"). It checks the configuration's own shape;
// resolve checks it against the topology.
func ParseConfig(raw []byte) (Config, error) {
	cfg := DefaultConfig()
	if len(bytes.TrimSpace(raw)) == 0 {
		return cfg, nil
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return Config{}, configError("", "not YAML or JSON: %v", err)
	}
	fields, err := object(js, "")
	if err != nil || fields == nil {
		return cfg, err
	}
	for _, name := range sortedKeys(fields) {
		v, f := fields[name], "."+name
		switch name {
		case "reservedResources":
			err = parseResources(v, f, &cfg.ReservedCPU)
		case "availableResources":
			err = parseResources(v, f, &cfg.AvailableCPU)
		case "reservedPoolNamespaces":
			cfg.ReservedPoolNamespaces, err = parseGlobs(v, f)
		case "preferIsolatedCPUs":
			err = parseBool(v, f, &cfg.PreferIsolatedCPUs)
		case "preferSharedCPUs":
			err = parseBool(v, f, &cfg.PreferSharedCPUs)
		case "pinCPU":
			err = parseBool(v, f, &cfg.PinCPU)
		case "pinMemory":
			err = parseBool(v, f, &cfg.PinMemory)
		case "dra":
			err = parseDRA(v, f, &cfg.DRA)
		default:
			if slices.Contains(unsupported, name) {
				return Config{}, configError(f, "nri-plugins' %s is not supported by this policy", name)
			}
			return Config{}, configError(f, "unknown field")
		}
		if err != nil {
			return Config{}, err
		}
	}
	if cfg.ReservedCPU.Kind == AmountAbsent {
		return Config{}, configError(".reservedResources.cpu", "required: some CPU must be reserved")
	}
	return cfg, nil
}

// object decodes a JSON object (nil for null) keeping each value raw.
func object(js []byte, field string) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(js, &fields); err != nil {
		return nil, configError(field, "want an object, got %s", kindOf(js))
	}
	return fields, nil
}

func parseResources(js []byte, field string, cpu *CPUAmount) error {
	fields, err := object(js, field)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(fields) {
		f := field + "." + name
		switch name {
		case "cpu":
			s, err := scalar(fields[name], f)
			if err != nil {
				return err
			}
			if *cpu, err = parseCPUAmount(s); err != nil {
				return configError(f, "%v", err)
			}
		case "memory":
			return configError(f, "memory reservations are not supported by this policy")
		default:
			return configError(f, "unknown field")
		}
	}
	return nil
}

func parseDRA(js []byte, field string, enabled *bool) error {
	fields, err := object(js, field)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(fields) {
		if name != "enabled" {
			return configError(field+"."+name, "unknown field")
		}
		if err := parseBool(fields[name], field+"."+name, enabled); err != nil {
			return err
		}
	}
	return nil
}

// scalar returns a string or number as text ("2", "750m", "0.5").
func scalar(js []byte, field string) (string, error) {
	var s string
	if err := json.Unmarshal(js, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(js, &n); err == nil {
		return n.String(), nil
	}
	return "", configError(field, "want a string or number, got %s", kindOf(js))
}

func parseBool(js []byte, field string, out *bool) error {
	if err := json.Unmarshal(js, out); err != nil || string(js) == "null" {
		return configError(field, "want true or false, got %s", kindOf(js))
	}
	return nil
}

func parseGlobs(js []byte, field string) ([]string, error) {
	var globs []string
	if err := json.Unmarshal(js, &globs); err != nil {
		return nil, configError(field, "want a list of namespace globs, got %s", kindOf(js))
	}
	for i, g := range globs {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return nil, configError(fmt.Sprintf("%s[%d]", field, i), "bad namespace glob %q", g)
		}
	}
	return globs, nil
}

// kindOf names a JSON value's type for an error message.
func kindOf(js []byte) string {
	switch t := strings.TrimSpace(string(js)); {
	case t == "null":
		return "null"
	case strings.HasPrefix(t, "{"):
		return "an object"
	case strings.HasPrefix(t, "["):
		return "a list"
	case strings.HasPrefix(t, `"`):
		return "a string " + t
	case t == "true" || t == "false":
		return "a boolean"
	default:
		return t
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
