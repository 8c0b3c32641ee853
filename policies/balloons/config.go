package balloons

import (
	"path"
	"strings"

	"github.com/nriwasm/nriwasm/sdk/go/kit/expr"
	"github.com/nriwasm/nriwasm/sdk/go/kit/quantity"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// Config is the policy's configuration, with nri-plugins' field names.
type Config struct {
	// BalloonTypes are the balloon types, matched in list order. "reserved"
	// and "default" are built in; a config may redefine (and move) them.
	BalloonTypes []*BalloonType `json:"balloonTypes"`
	// ReservedResources.cpu sizes the reserved balloon: a quantity (its
	// minCPUs) or a cpuset it prefers. Default 750m (one CPU).
	ReservedResources Resources `json:"reservedResources"`
	// AvailableResources.cpu is the cpuset the policy manages ("cpuset:..."
	// or "exclude-cpuset:..."), of which only the online CPUs count, as in
	// nri-plugins (a set that holds none is refused). Default: every online
	// CPU.
	AvailableResources Resources `json:"availableResources"`
	// ReservedPoolNamespaces are namespace globs the reserved balloon
	// takes, besides kube-system.
	ReservedPoolNamespaces []string `json:"reservedPoolNamespaces"`
	// AllocatorTopologyBalancing spreads balloons over packages, dies and
	// NUMA nodes (true) or packs them (false, the default). A type may
	// override it.
	AllocatorTopologyBalancing bool `json:"allocatorTopologyBalancing"`
	// PreferSpreadOnPhysicalCores takes one thread per core first. A type
	// may override it.
	PreferSpreadOnPhysicalCores bool `json:"preferSpreadOnPhysicalCores"`
	// PinCPU answers cpuset_cpus. Default true.
	PinCPU *bool `json:"pinCPU"`
	// PinMemory answers cpuset_mems. Default true; a type may override it.
	PinMemory *bool `json:"pinMemory"`
	// Preserve.matchExpressions: containers that match are left alone.
	Preserve *Preserve `json:"preserve"`
}

// IgnoredFields implements policyconfig.Ignorer: nri-plugins' fields that
// change no placement, accepted at any value with a warning naming each.
func (Config) IgnoredFields() map[string]string {
	const outside = "nriwasm's agent is configured outside the policy (its Helm chart and flags)"
	const noClasses = "CPU frequency and power classes are not applied; placement is the same"
	return map[string]string{
		"agent":                  outside + "; NodeResourceTopology and the pod resources API are not used",
		"log":                    outside,
		"instrumentation":        outside,
		"control":                "resource controllers (CPU classes, RDT, block I/O) are not applied; placement is the same",
		"idleCPUClass":           noClasses,
		"showContainersInNrt":    "NodeResourceTopology is not published",
		"controllableInterrupts": "interrupt affinity is not managed (irqClaim is not supported)",
	}
}

// notImplemented is why a field that changes placement or what containers
// run with is refused at any value but the one that asks for nothing.
const notImplemented = "this policy does not implement it"

// none accepts a field's empty value only: an empty list or string asks for
// nothing, which the policy honours by doing nothing.
func none(empty any, why string) policyconfig.Restriction {
	return policyconfig.Restriction{Accept: []any{empty}, Why: why}
}

// RestrictedFields implements policyconfig.Restricter: turboDomain at its
// default, which without cpuClasses changes nothing, and nri-plugins'
// classes that change placement or what containers run with, which this
// policy cannot honour, accepted only empty.
func (Config) RestrictedFields() map[string]policyconfig.Restriction {
	return map[string]policyconfig.Restriction{
		"turboDomain":       {Accept: []any{"package"}, Why: "turbo arbitration needs cpuClasses, which this policy does not implement"},
		"loadClasses":       none([]any{}, notImplemented),
		"schedulingClasses": none([]any{}, notImplemented),
		"cpuClasses":        none([]any{}, notImplemented+" (CPU classes can steer placement, e.g. to prioritized cores)"),
	}
}

// Preserve names containers the policy leaves alone.
type Preserve struct {
	MatchExpressions []expr.Expression `json:"matchExpressions"`
}

// Resources is a resource amount of the configuration; only CPU.
type Resources struct {
	CPU *quantity.CPUAmount `json:"cpu"`
}

// IgnoredFields implements policyconfig.Ignorer: nri-plugins' balloons
// policy reads only the cpu amount too.
func (Resources) IgnoredFields() map[string]string {
	return map[string]string{"memory": "the balloons policy sizes CPUs only (nri-plugins' ignores memory too)"}
}

// BalloonType is one balloonTypes entry.
type BalloonType struct {
	Name                        string            `json:"name"`
	Namespaces                  []string          `json:"namespaces"`
	MatchExpressions            []expr.Expression `json:"matchExpressions"`
	MinCPUs                     int               `json:"minCPUs"`
	MaxCPUs                     int               `json:"maxCPUs"`
	MinBalloons                 int               `json:"minBalloons"`
	MaxBalloons                 int               `json:"maxBalloons"`
	AllocatorPriority           Priority          `json:"allocatorPriority"`
	PreferNewBalloons           bool              `json:"preferNewBalloons"`
	PreferSpreadingPods         bool              `json:"preferSpreadingPods"`
	PreferPerNamespaceBalloon   bool              `json:"preferPerNamespaceBalloon"`
	GroupBy                     string            `json:"groupBy"`
	ShareIdleCPUsInSame         Level             `json:"shareIdleCPUsInSame"`
	PreferCloseToDevices        []string          `json:"preferCloseToDevices"`
	PreferIsolCpus              bool              `json:"preferIsolCpus"`
	PreferCoreType              CoreType          `json:"preferCoreType"`
	PreferSpreadOnPhysicalCores *bool             `json:"preferSpreadOnPhysicalCores"`
	AllocatorTopologyBalancing  *bool             `json:"allocatorTopologyBalancing"`
	HideHyperthreads            *bool             `json:"hideHyperthreads"`
	PinMemory                   *bool             `json:"pinMemory"`
	MemoryTypes                 []MemoryType      `json:"memoryTypes"`
	Components                  []Component       `json:"components"`
	ComponentCreation           CreationPolicy    `json:"componentCreation"`
	// PublishDRADevices (ours): every instance of the type, 0 …
	// maxBalloons-1, is a DRA device, created at Init.
	PublishDRADevices bool `json:"publishDRADevices"`
}

// IgnoredFields implements policyconfig.Ignorer: a type's fields that
// change no placement.
func (BalloonType) IgnoredFields() map[string]string {
	return map[string]string{
		"cpuClass":            "CPU frequency and power classes are not applied; placement is the same",
		"showContainersInNrt": "NodeResourceTopology is not published",
	}
}

// RestrictedFields implements policyconfig.Restricter: a type's loads,
// scheduling class and interrupts, which this policy cannot honour,
// accepted only empty.
func (BalloonType) RestrictedFields() map[string]policyconfig.Restriction {
	return map[string]policyconfig.Restriction{
		"loads":           none([]any{}, notImplemented),
		"schedulingClass": none("", notImplemented),
		"irqClaim":        none([]any{}, notImplemented),
		"irqMode":         none("", notImplemented),
	}
}

// Component is a composite balloon's part.
type Component struct {
	BalloonType string `json:"balloonType"`
}

// Priority is allocatorPriority: which types' minBalloons get CPUs first.
type Priority string

func (p Priority) rank() int {
	switch p {
	case "high":
		return 0
	case "", "normal":
		return 1
	case "low":
		return 2
	}
	return 3
}

// Level is a topology level: shareIdleCPUsInSame's value.
type Level string

// The levels, widest first.
const (
	LevelSystem  Level = "system"
	LevelPackage Level = "package"
	LevelDie     Level = "die"
	LevelNUMA    Level = "numa"
	LevelL2Cache Level = "l2cache"
	LevelCore    Level = "core"
)

// CoreType is preferCoreType.
type CoreType string

// MemoryType is a memoryTypes entry.
type MemoryType string

// CreationPolicy is componentCreation.
type CreationPolicy string

// The built-in balloon types.
const (
	reservedType = "reserved"
	defaultType  = "default"
)

// ParseConfig decodes and checks a configuration, logging a warning for
// each nri-plugins field it accepts and ignores. Every error is an
// INVALID_ARGUMENT *abi.PolicyError naming the field; every refused field,
// whether decoding or a check of its value refused it, is in the one error.
func ParseConfig(raw []byte) (*Config, error) {
	cfg, warnings, err := ParseConfigWarnings(raw)
	for _, w := range warnings {
		policy.Log.Warnf("%s", w)
	}
	return cfg, err
}

// ParseConfigWarnings is ParseConfig returning the warnings instead of
// logging them.
func ParseConfigWarnings(raw []byte) (*Config, []policyconfig.Warning, error) {
	cfg := &Config{}
	warnings, err := policyconfig.DecodeFunc(raw, policyconfig.Root, func(d *policyconfig.Decoder, v policyconfig.Value) {
		decodeConfig(d, v, cfg)
		// The values are checked as they decoded, into the one error with
		// the fields decoding refused, so that a carried-over configuration
		// is fixed in one pass. A value decoding refused is left at its
		// default: a check of that field adds nothing (Errors.Add), and a
		// check that reads another field skips when that one is refused.
		cfg.validate(d.Errors())
		cfg.refuseCompositeClasses(v.Doc, d.Errors())
	})
	if err != nil {
		return nil, nil, err
	}
	return cfg, warnings, nil
}

// refuseCompositeClasses refuses a composite balloon type with a cpuClass,
// as nri-plugins does (balloons-policy.go, setConfig's validation: "composite
// balloon %q cannot have CpuClasses"), although cpuClass is otherwise
// accepted and not applied: a configuration nri-plugins refuses is refused
// here too. The field is read from the document, doc, because decoding
// drops ignored fields; an empty cpuClass is no class, as there.
func (c *Config) refuseCompositeClasses(doc any, errs *policyconfig.Errors) {
	// A part of the wrong shape is refused already, and reads as nothing.
	top, _ := doc.(map[string]any)
	types, _ := top["balloonTypes"].([]any)
	for i, t := range types {
		obj, _ := t.(map[string]any)
		class := obj["cpuClass"]
		if i >= len(c.BalloonTypes) || c.BalloonTypes[i] == nil || len(c.BalloonTypes[i].Components) == 0 || class == nil || class == "" {
			continue
		}
		errs.Add(field("balloonTypes", i, "cpuClass"), "a composite balloon type cannot have a CPU class (nri-plugins refuses it): set it on the component types")
	}
}

func field(parts ...any) string { return policyconfig.Path(policyconfig.Root, parts...) }

// validate adds every value of c it refuses to errs.
func (c *Config) validate(errs *policyconfig.Errors) {
	if a := c.AvailableResources.CPU; a != nil && !a.IsSet() {
		errs.Add(field("availableResources", "cpu"), "want \"cpuset:LIST\" or \"exclude-cpuset:LIST\", not a quantity")
	}
	globs(errs, c.ReservedPoolNamespaces, "reservedPoolNamespaces")
	if c.Preserve != nil {
		checkExpressions(errs, c.Preserve.MatchExpressions, "preserve", "matchExpressions")
	}
	index := map[string]int{}
	// A component naming no type may name one whose name decoding refused.
	namesRefused := false
	for i, t := range c.BalloonTypes {
		switch {
		case t == nil:
			errs.Add(field("balloonTypes", i), "want a balloon type, got null")
		case t.Name == "":
			namesRefused = namesRefused || errs.Refused(field("balloonTypes", i, "name"))
			errs.Add(field("balloonTypes", i, "name"), "required")
		default:
			// A duplicate is left out: components name the first.
			if j, dup := index[t.Name]; dup {
				errs.Add(field("balloonTypes", i, "name"), "%q is also balloonTypes[%d]", t.Name, j)
				continue
			}
			index[t.Name] = i
		}
	}
	for i, t := range c.BalloonTypes {
		if t == nil {
			continue
		}
		t.validate(errs, i, index, namesRefused, c.BalloonTypes)
		if t.Name == reservedType && len(t.Components) > 0 && c.ReservedResources.CPU != nil && c.ReservedResources.CPU.IsSet() {
			// nri-plugins refuses it too: a reserved cpuset becomes a
			// preferCloseToDevices of the reserved type, which a
			// composite type may not have.
			errs.Add(field("reservedResources", "cpu"), "a cpuset cannot size a composite reserved balloon type (balloonTypes[%d]): give a quantity", i)
		}
	}
}

// componentLoop follows the components of type k (by index) and returns the
// chain of type names that leads back to type i, or nil if none does.
func componentLoop(all []*BalloonType, index map[string]int, k, i int) []string {
	seen := map[int]bool{}
	var walk func(k int) []string
	walk = func(k int) []string {
		if k == i {
			return []string{all[k].Name}
		}
		if seen[k] {
			return nil
		}
		seen[k] = true
		for _, comp := range all[k].Components {
			if next, ok := index[comp.BalloonType]; ok {
				if rest := walk(next); rest != nil {
					return append([]string{all[k].Name}, rest...)
				}
			}
		}
		return nil
	}
	return walk(k)
}

// validate adds every value of t, balloonTypes[i], it refuses to errs.
// index maps the types' names to their indices in all; namesRefused says
// that some type's name was refused, so a component naming no type is not
// refused (it may name that one).
func (t *BalloonType) validate(errs *policyconfig.Errors, i int, index map[string]int, namesRefused bool, all []*BalloonType) {
	f := func(parts ...any) string { return field(append([]any{"balloonTypes", i}, parts...)...) }
	if t.MinCPUs < 0 {
		errs.Add(f("minCPUs"), "%d: want 0 or more", t.MinCPUs)
	}
	if t.MaxCPUs < -1 {
		errs.Add(f("maxCPUs"), "%d: want -1 (never run), 0 (no limit) or more", t.MaxCPUs)
	}
	if t.MaxCPUs > 0 && t.MinCPUs > t.MaxCPUs {
		errs.Add(f("minCPUs"), "%d is above maxCPUs %d", t.MinCPUs, t.MaxCPUs)
	}
	if t.MinBalloons < 0 {
		errs.Add(f("minBalloons"), "%d: want 0 or more", t.MinBalloons)
	}
	if t.MaxBalloons < 0 {
		errs.Add(f("maxBalloons"), "%d: want 0 (no limit) or more", t.MaxBalloons)
	}
	if t.MaxBalloons > 0 && t.MinBalloons > t.MaxBalloons {
		errs.Add(f("minBalloons"), "%d is above maxBalloons %d", t.MinBalloons, t.MaxBalloons)
	}
	if t.ComponentCreation != "" && len(t.Components) == 0 && !errs.Refused(f("components")) {
		errs.Add(f("componentCreation"), "needs components")
	}
	globs(errs, t.Namespaces, "balloonTypes", i, "namespaces")
	checkExpressions(errs, t.MatchExpressions, "balloonTypes", i, "matchExpressions")
	if t.GroupBy != "" {
		if _, err := expr.Expand(t.GroupBy, func(string) (string, bool) { return "", true }); err != nil {
			errs.Add(f("groupBy"), "%v", err)
		}
	}
	for j, comp := range t.Components {
		at := f("components", j, "balloonType")
		k, ok := index[comp.BalloonType]
		switch {
		case !ok:
			if !namesRefused {
				errs.Add(at, "no balloon type %q", comp.BalloonType)
			}
		case k == i:
			errs.Add(at, "a balloon type cannot be its own component")
		case all[k].PublishDRADevices:
			errs.Add(at, "%q publishes DRA devices: its instances are claimed, not parts", comp.BalloonType)
		default:
			if loop := componentLoop(all, index, k, i); loop != nil {
				errs.Add(at, "%q is composed of %s again: %s", comp.BalloonType, t.Name,
					strings.Join(append([]string{t.Name}, loop...), " → "))
			}
		}
	}
	if len(t.Components) > 0 {
		// As nri-plugins (validateConfig): a composite balloon's CPUs are
		// its parts', so the options that pick CPUs belong to the parts.
		var set []string
		for _, o := range []struct {
			name string
			on   bool
		}{
			{"preferSpreadOnPhysicalCores", t.PreferSpreadOnPhysicalCores != nil},
			{"allocatorTopologyBalancing", t.AllocatorTopologyBalancing != nil},
			{"preferCloseToDevices", len(t.PreferCloseToDevices) > 0},
			{"preferIsolCpus", t.PreferIsolCpus},
			{"preferCoreType", t.PreferCoreType != ""},
		} {
			if o.on {
				set = append(set, o.name)
			}
		}
		if len(set) > 0 {
			errs.Add(f(set[0]), "a composite balloon type's CPUs are its components': set %s on the component types", strings.Join(set, ", "))
		}
	}
	if t.PublishDRADevices {
		t.validateDevices(errs, f)
	}
}

// validateDevices adds to errs what keeps t's instances from being DRA
// devices (publishDRADevices); f is the path of t's field.
func (t *BalloonType) validateDevices(errs *policyconfig.Errors, f func(parts ...any) string) {
	// A type that cannot be a device at all is refused for that alone:
	// what its instances would need as devices does not apply.
	switch {
	case t.Name == reservedType:
		errs.Add(f("publishDRADevices"), "the reserved balloon cannot be a DRA device")
		return
	case len(t.Components) > 0:
		errs.Add(f("publishDRADevices"), "composite balloons cannot be DRA devices")
		return
	}
	if t.MaxBalloons < 1 {
		errs.Add(f("maxBalloons"), "publishDRADevices needs maxBalloons ≥ 1: one device per instance")
	}
	if t.MaxCPUs < 1 {
		errs.Add(f("maxCPUs"), "publishDRADevices needs maxCPUs ≥ 1: the device's cpu capacity")
	}
	if t.MinCPUs < 1 {
		errs.Add(f("minCPUs"), "publishDRADevices needs minCPUs ≥ 1: a device's instance has CPUs from Init on")
	}
	if len(t.Name) > 64 {
		errs.Add(f("name"), "%d characters: a DRA attribute value (balloonType) holds at most 64", len(t.Name))
	}
}

// globs adds to errs each bad namespace glob of list, the field at parts.
func globs(errs *policyconfig.Errors, list []string, parts ...any) {
	for i, g := range list {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			errs.Add(field(append(parts, i)...), "bad namespace glob %q", g)
		}
	}
}
