package policyconfig

import (
	"fmt"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Errors collects a configuration's refused fields, so that a policy's
// checks after decoding report every one in a single error, as Decode does:
// Decode, DecodeFunc and a policy's value checks build their errors with
// it. The zero value is empty and ready to use.
//
//	var errs policyconfig.Errors
//	if c.MinCPUs < 0 {
//		errs.Add(policyconfig.Path(policyconfig.Root, "minCPUs"), "%d: want 0 or more", c.MinCPUs)
//	}
//	if c.MaxCPUs < -1 {
//		errs.Add(policyconfig.Path(policyconfig.Root, "maxCPUs"), "%d: want -1 or more", c.MaxCPUs)
//	}
//	return errs.Err() // config.minCPUs: -3: want 0 or more (and 1 more: config.maxCPUs: -2: want -1 or more)
//
// A field is refused once: Add ignores a field that is refused already, or
// that lies inside one that is (a check that reads a value the decoder
// refused saw the default in its place, and would only repeat the
// refusal).
type Errors struct {
	list []*abi.PolicyError
}

// Add refuses the field at path ("config.balloonTypes[1].minCPUs"), with a
// message as fmt.Sprintf formats it, unless Refused(path).
func (e *Errors) Add(path, format string, args ...any) {
	if e.Refused(path) {
		return
	}
	e.list = append(e.list, Errorf(path, format, args...))
}

// Refused tells whether the field at path, or a field that holds it
// ("config.balloonTypes[1]" holds "config.balloonTypes[1].minCPUs"), is
// refused: for a check that reads a field besides its own, and that would
// report a wrong value where the decoder left a default.
func (e *Errors) Refused(path string) bool {
	for _, r := range e.list {
		if within(path, r.Field) {
			return true
		}
	}
	return false
}

// within tells whether path is outer or a path inside it.
func within(path, outer string) bool {
	rest, ok := strings.CutPrefix(path, outer)
	return ok && (rest == "" || outer == "" || rest[0] == '.' || rest[0] == '[')
}

// Err is nil when no field is refused, the field's error when one is, and
// otherwise one error for all of them: its Field is the first refused
// field's, its Message the first one's message followed by every other
// refusal in the order they were added, "MSG (and N more: FIELD: MSG;
// FIELD: MSG)". Its code is INVALID_ARGUMENT.
func (e *Errors) Err() error {
	switch len(e.list) {
	case 0:
		return nil
	case 1:
		return e.list[0]
	}
	first := e.list[0]
	var b strings.Builder
	fmt.Fprintf(&b, "%s (and %d more:", first.Message, len(e.list)-1)
	for i, r := range e.list[1:] {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " %s: %s", r.Field, r.Message)
	}
	b.WriteByte(')')
	return Errorf(first.Field, "%s", b.String())
}
