package compare

import (
	"fmt"
	"slices"
)

// Difference is one thing two outcomes disagree on.
type Difference struct {
	// What differs: "error" (one side failed, the other did not), "cpus",
	// "mems", "updates[ID].cpus", "updates[ID].mems" (an update on one
	// side only shows as a difference of its fields), or "devices".
	Field string `json:"field"`
	// Active and Other are the two sides' values ("" when a side has none).
	Active string `json:"active"`
	Other  string `json:"other"`
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: %s → %s", d.Field, orNone(d.Active), orNone(d.Other))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Diff lists what other does differently from active: an error on one side
// only, or, when both succeeded, the created container's cpuset or memory
// nodes, the updates of running containers, and a claim's devices and their
// environment. Two errors with other texts are not a difference; nor are
// fields the agent checks but never compares (annotations, env of a
// container).
func Diff(active, other Outcome) []Difference {
	if (active.Error == "") != (other.Error == "") {
		return []Difference{{Field: "error", Active: active.Error, Other: other.Error}}
	}
	if active.Error != "" {
		return nil
	}
	var ds []Difference
	add := func(field, a, o string) {
		if a != o {
			ds = append(ds, Difference{Field: field, Active: a, Other: o})
		}
	}
	add("cpus", active.CPUs, other.CPUs)
	add("mems", active.Mems, other.Mems)
	au, ou := byContainer(active.Updates), byContainer(other.Updates)
	ids := make([]string, 0, len(au)+len(ou))
	for id := range au {
		ids = append(ids, id)
	}
	for id := range ou {
		if _, ok := au[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		add("updates["+id+"].cpus", au[id].CPUs, ou[id].CPUs)
		add("updates["+id+"].mems", au[id].Mems, ou[id].Mems)
	}
	if !slices.EqualFunc(active.Devices, other.Devices, func(a, b Device) bool {
		return a.Request == b.Request && a.Device == b.Device && slices.Equal(a.Env, b.Env)
	}) {
		add("devices", devicesText(active.Devices), devicesText(other.Devices))
	}
	return ds
}

// byContainer is the last update of each container (later updates in one
// answer override earlier ones, as the agent applies them).
func byContainer(us []Update) map[string]Update {
	m := make(map[string]Update, len(us))
	for _, u := range us {
		m[u.Container] = u
	}
	return m
}

func devicesText(ds []Device) string {
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += "; "
		}
		s += d.Request + "=" + d.Device
		for _, e := range d.Env {
			s += " " + e
		}
	}
	return s
}
