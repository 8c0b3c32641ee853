package config

import (
	"bytes"
	"reflect"
	"strings"
)

// Change is what differs between a running configuration and a new one.
type Change struct {
	// PolicyConfig is set when the policy's configuration (Policy.Data) differs:
	// apply it live with the policy's Reconfigure.
	PolicyConfig bool
	// Swap lists the fields that change the policy module or how its
	// instances run (policy.name, policy.memoryLimit, policy.callTimeout), by
	// path: the agent applies them live by a swap (docs/rollout.md).
	Swap []string
	// Settings lists the host's own settings that take effect as they are
	// (policy.swap.maxMoves), by path.
	Settings []string
	// Restart lists the other fields that differ, by path in the order of the
	// file (e.g. "dra.enabled"): they take effect only after a restart.
	Restart []string
}

// IsZero reports whether nothing changed.
func (c Change) IsZero() bool {
	return !c.PolicyConfig && len(c.Swap) == 0 && len(c.Settings) == 0 && len(c.Restart) == 0
}

// Err returns a *RestartError when c holds fields that need a restart, else nil.
// The agent applies nothing of such a change (not even the policy's
// configuration) and keeps running with the old configuration.
func (c Change) Err() error {
	if len(c.Restart) == 0 {
		return nil
	}
	return &RestartError{Fields: c.Restart}
}

// RestartError refuses a live change of fields that need a restart.
type RestartError struct {
	Fields []string
}

func (e *RestartError) Error() string {
	return "restart required to change " + strings.Join(e.Fields, ", ")
}

// liveFields are the fields a running agent applies; the policy's configuration
// is compared by content (Policy.Data), wherever it comes from.
var liveFields = map[string]bool{"policy.config": true, "policy.configFile": true}

// swapFields are the fields a running agent applies by swapping the policy.
var swapFields = map[string]bool{"policy.name": true, "policy.memoryLimit": true, "policy.callTimeout": true}

// settingFields are the host's settings a running agent takes as they are.
var settingFields = map[string]bool{"policy.swap.maxMoves": true}

// Diff classifies the change from old to new; both should be completed (see
// Complete). Every field but the policy's configuration, the fields a swap
// applies and the swap's own bound needs a restart, fields added later
// included, and dra.enabled changing between unset, true and false counts as
// a change.
func Diff(old, new *Config) Change {
	var c Change
	diffFields(reflect.ValueOf(old).Elem(), reflect.ValueOf(new).Elem(), "", func(path string) {
		switch {
		case liveFields[path]:
		case swapFields[path]:
			c.Swap = append(c.Swap, path)
		case settingFields[path]:
			c.Settings = append(c.Settings, path)
		default:
			c.Restart = append(c.Restart, path)
		}
	})
	c.PolicyConfig = !bytes.Equal(old.Policy.Data, new.Policy.Data)
	return c
}

// diffFields calls changed with the path of every JSON field that differs.
func diffFields(a, b reflect.Value, path string, changed func(string)) {
	t := a.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		p := join(path, name)
		if f.Type.Kind() == reflect.Struct {
			diffFields(a.Field(i), b.Field(i), p, changed)
		} else if !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			changed(p)
		}
	}
}

// join appends a field name to a dotted path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
