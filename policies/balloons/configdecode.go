package balloons

import (
	"slices"
	"strings"

	"github.com/nriwasm/nriwasm/sdk/go/kit/expr"
	"github.com/nriwasm/nriwasm/sdk/go/kit/quantity"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// The configuration is decoded field by field (policyconfig.Decoder), not
// by policyconfig.Decode's reflection, so the module links neither
// encoding/json nor most of reflect (RATIONALE.md, "Why is the
// configuration decoded by hand?"). Each function fills one type as Decode
// would fill it from the type's `json` tags, with the same errors.

func decodeConfig(d *policyconfig.Decoder, v policyconfig.Value, c *Config) {
	d.Object(v, Config{}, map[string]func(policyconfig.Value){
		"balloonTypes": func(v policyconfig.Value) {
			policyconfig.List(d, v, &c.BalloonTypes, func(v policyconfig.Value, t **BalloonType) {
				*t = new(BalloonType)
				decodeBalloonType(d, v, *t)
			})
		},
		"reservedResources":           func(v policyconfig.Value) { decodeResources(d, v, &c.ReservedResources) },
		"availableResources":          func(v policyconfig.Value) { decodeResources(d, v, &c.AvailableResources) },
		"reservedPoolNamespaces":      func(v policyconfig.Value) { d.Strings(v, &c.ReservedPoolNamespaces) },
		"allocatorTopologyBalancing":  func(v policyconfig.Value) { d.Bool(v, &c.AllocatorTopologyBalancing) },
		"preferSpreadOnPhysicalCores": func(v policyconfig.Value) { d.Bool(v, &c.PreferSpreadOnPhysicalCores) },
		"pinCPU":                      func(v policyconfig.Value) { d.BoolPtr(v, &c.PinCPU) },
		"pinMemory":                   func(v policyconfig.Value) { d.BoolPtr(v, &c.PinMemory) },
		"preserve": func(v policyconfig.Value) {
			if c.Preserve == nil {
				c.Preserve = new(Preserve)
			}
			d.Object(v, Preserve{}, map[string]func(policyconfig.Value){
				"matchExpressions": func(v policyconfig.Value) { decodeExpressions(d, v, &c.Preserve.MatchExpressions) },
			})
		},
	})
}

func decodeResources(d *policyconfig.Decoder, v policyconfig.Value, r *Resources) {
	d.Object(v, Resources{}, map[string]func(policyconfig.Value){
		"cpu": func(v policyconfig.Value) {
			a, err := quantity.CPUAmountFromJSON(v.Doc)
			if err != nil {
				d.Failf(v.Path, "%v", err)
				return
			}
			r.CPU = &a
		},
	})
}

func decodeExpressions(d *policyconfig.Decoder, v policyconfig.Value, list *[]expr.Expression) {
	policyconfig.List(d, v, list, func(v policyconfig.Value, e *expr.Expression) {
		d.Object(v, expr.Expression{}, map[string]func(policyconfig.Value){
			"key":      func(v policyconfig.Value) { d.String(v, &e.Key) },
			"operator": func(v policyconfig.Value) { d.String(v, &e.Operator) },
			"values":   func(v policyconfig.Value) { d.Strings(v, &e.Values) },
		})
	})
}

func decodeBalloonType(d *policyconfig.Decoder, v policyconfig.Value, t *BalloonType) {
	d.Object(v, BalloonType{}, map[string]func(policyconfig.Value){
		"name":             func(v policyconfig.Value) { d.String(v, &t.Name) },
		"namespaces":       func(v policyconfig.Value) { d.Strings(v, &t.Namespaces) },
		"matchExpressions": func(v policyconfig.Value) { decodeExpressions(d, v, &t.MatchExpressions) },
		"minCPUs":          func(v policyconfig.Value) { d.Int(v, &t.MinCPUs) },
		"maxCPUs":          func(v policyconfig.Value) { d.Int(v, &t.MaxCPUs) },
		"minBalloons":      func(v policyconfig.Value) { d.Int(v, &t.MinBalloons) },
		"maxBalloons":      func(v policyconfig.Value) { d.Int(v, &t.MaxBalloons) },
		"allocatorPriority": func(v policyconfig.Value) {
			enum(d, v, (*string)(&t.AllocatorPriority), "allocatorPriority", priorities...)
		},
		"preferNewBalloons":         func(v policyconfig.Value) { d.Bool(v, &t.PreferNewBalloons) },
		"preferSpreadingPods":       func(v policyconfig.Value) { d.Bool(v, &t.PreferSpreadingPods) },
		"preferPerNamespaceBalloon": func(v policyconfig.Value) { d.Bool(v, &t.PreferPerNamespaceBalloon) },
		"groupBy":                   func(v policyconfig.Value) { d.String(v, &t.GroupBy) },
		"shareIdleCPUsInSame":       func(v policyconfig.Value) { enum(d, v, (*string)(&t.ShareIdleCPUsInSame), "level", levels...) },
		"preferCloseToDevices": func(v policyconfig.Value) {
			// Checked here, not in validate, so a device we cannot use
			// (podresourceapi:) is refused in the one error with every
			// other field refused.
			policyconfig.List(d, v, &t.PreferCloseToDevices, func(v policyconfig.Value, dev *string) {
				d.String(v, dev)
				if _, ok := v.Doc.(string); !ok {
					return
				}
				if _, err := parseDevice(*dev); err != nil {
					d.Failf(v.Path, "%v", err)
				}
			})
		},
		"preferIsolCpus":              func(v policyconfig.Value) { d.Bool(v, &t.PreferIsolCpus) },
		"preferCoreType":              func(v policyconfig.Value) { enum(d, v, (*string)(&t.PreferCoreType), "core type", coreTypes...) },
		"preferSpreadOnPhysicalCores": func(v policyconfig.Value) { d.BoolPtr(v, &t.PreferSpreadOnPhysicalCores) },
		"allocatorTopologyBalancing":  func(v policyconfig.Value) { d.BoolPtr(v, &t.AllocatorTopologyBalancing) },
		"hideHyperthreads":            func(v policyconfig.Value) { d.BoolPtr(v, &t.HideHyperthreads) },
		"pinMemory":                   func(v policyconfig.Value) { d.BoolPtr(v, &t.PinMemory) },
		"memoryTypes": func(v policyconfig.Value) {
			// A null entry is refused, as encoding/json hands it to the
			// type's own decoding.
			if list, ok := v.Doc.([]any); ok {
				for i, e := range list {
					if e == nil {
						d.Failf(policyconfig.Path(v.Path, i), "memory type null: want one of %s", strings.Join(memoryTypes, ", "))
					}
				}
			}
			policyconfig.List(d, v, &t.MemoryTypes, func(v policyconfig.Value, m *MemoryType) {
				enum(d, v, (*string)(m), "memory type", memoryTypes...)
			})
		},
		"components": func(v policyconfig.Value) {
			policyconfig.List(d, v, &t.Components, func(v policyconfig.Value, c *Component) {
				d.Object(v, Component{}, map[string]func(policyconfig.Value){
					"balloonType": func(v policyconfig.Value) { d.String(v, &c.BalloonType) },
				})
			})
		},
		"componentCreation": func(v policyconfig.Value) {
			enum(d, v, (*string)(&t.ComponentCreation), "componentCreation", creationPolicies...)
		},
		"publishDRADevices": func(v policyconfig.Value) { d.Bool(v, &t.PublishDRADevices) },
	})
}

// The values of the configuration's enumerations.
var (
	priorities       = []string{"high", "normal", "low", "none"}
	levels           = []string{"system", "package", "die", "numa", "l2cache", "core"}
	coreTypes        = []string{"performance", "efficient"}
	memoryTypes      = []string{"DRAM", "HBM", "PMEM"}
	creationPolicies = []string{"all", "balance-balloons"}
)

// enum fills a string restricted to values; any other value (or type) is
// refused naming what it is and the values.
func enum(d *policyconfig.Decoder, v policyconfig.Value, dst *string, what string, values ...string) {
	if s, ok := v.Doc.(string); ok && slices.Contains(values, s) {
		*dst = s
		return
	}
	d.Failf(v.Path, "%s %s: want one of %s", what, v.JSON(), strings.Join(values, ", "))
}
