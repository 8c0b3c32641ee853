// Package policyconfig decodes a policy's configuration strictly: YAML or
// JSON (in a Wasm module JSON only, see below) into a Go struct whose `json` tags name the fields, with every unknown
// field, wrong type or out-of-range number refused by an INVALID_ARGUMENT
// *abi.PolicyError whose Field is the path of the offending value
// ("config.balloonTypes[1].minCPUs"). It builds for wasip1, so a policy
// decodes its configuration inside the guest.
//
// Linking policyconfig declares the policy's configuration format JSON
// (policy.DeclareConfigFormat, PolicyMetadata.config_format): the host converts
// a YAML configuration to JSON before Init and Reconfigure, so the wasip1
// build decodes JSON only and the module carries no YAML parser (1.2 MB of
// topology-aware's). The native build, which tests and `simulate --native`
// feed the user's bytes, still reads YAML. Either way the same
// sigs.k8s.io/yaml conversion runs, on one side or the other, so a
// configuration decodes to the same values.
//
//	type Config struct {
//		PinCPU  *bool    `json:"pinCPU"`
//		MinCPUs int      `json:"minCPUs"`
//		Types   []Type   `json:"balloonTypes"`
//	}
//	cfg := Config{MinCPUs: 1} // defaults: absent fields keep them
//	if err := policyconfig.Decode(raw, &cfg); err != nil {
//		return err // e.g. config.balloonTypes[0].minCPU: unknown field (...)
//	}
//
// A type that implements json.Unmarshaler checks its own values; its error
// is reported at its path.
//
// Decode finds a struct's fields by reflection and fills it with
// encoding/json. A policy that would rather its module link neither (0.4–0.5
// MB of a guest) fills its configuration with a Decoder instead, one
// hand-written function per type (DecodeFunc); it accepts and refuses the
// same documents with the same errors. Semantic checks after decoding report
// through Errors (every refused value in one error, as Decode's) with Path, so
// every error names its field the same way; a DecodeFunc's decode function
// adds them to the Decoder's own (Decoder.Errors), so they come in the one
// error with the fields decoding refused.
//
// A configuration carried over from the project a policy follows (for
// nriwasm's built-in policies, containers/nri-plugins) must start when it
// asks for nothing the policy cannot do. A struct type sorts that project's
// fields it has no Go field for with up to three methods:
//
//   - Ignorer: fields that do not change what the policy decides (logging,
//     metrics endpoints): accepted at any value, each reported as a Warning.
//   - Restricter: fields accepted only at the values the policy behaves
//     like (colocatePods: false): any other value is refused.
//   - Unsupporter: fields refused at any value.
//
// Decode checks the whole document before it fails: every refused field,
// unknown field and wrong value is in the one error it returns (its Field is
// the first of them, its Message lists them all), so a user fixes a carried-over
// configuration in one pass. Decode and DecodeAt log the warnings through the
// policy's log (policy.Log, so the host's log and `nriwasm simulate`'s report
// show them); DecodeWarnings returns them instead.
package policyconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/jsontext"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// A policy that links policyconfig wants its configuration as JSON: the host
// converts YAML before sending it, so the module's build (json_wasip1.go)
// carries no YAML parser.
func init() { policy.DeclareConfigFormat(abi.ConfigFormat_CONFIG_FORMAT_JSON) }

// Root is where Decode starts field paths: a policy's configuration.
const Root = "config"

// Unsupporter is implemented by a configuration struct that refuses some
// field names at any value: UnsupportedFields maps a field name to why.
type Unsupporter interface {
	UnsupportedFields() map[string]string
}

// Ignorer is implemented by a configuration struct that accepts some field
// names at any value without acting on them: IgnoredFields maps a field name
// to why ignoring it changes nothing the policy decides. Each one present is
// a Warning.
type Ignorer interface {
	IgnoredFields() map[string]string
}

// Restricter is implemented by a configuration struct that accepts some
// field names only at certain values: RestrictedFields maps a field name to
// its Restriction.
type Restricter interface {
	RestrictedFields() map[string]Restriction
}

// Restriction is a field accepted only at the values in Accept (compared as
// JSON: false, "none", []string{} and "" are all distinct); Why says why any
// other value is refused.
type Restriction struct {
	Accept []any
	Why    string
}

// Warning is a field Decode accepted without acting on it.
type Warning struct {
	Field string // its path ("config.instrumentation")
	Why   string // the Ignorer's reason
}

func (w Warning) String() string { return w.Field + ": ignored: " + w.Why }

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// Decode decodes raw (YAML or JSON) into v, a pointer to a struct. An empty
// or null document leaves v alone. Absent and null fields keep v's values.
// Field paths start with Root. Warnings go to policy.Log.
func Decode(raw []byte, v any) error { return DecodeAt(raw, v, Root) }

// DecodeAt is Decode with field paths under root ("" for none), for a
// document that is not a policy's configuration or is part of a larger one.
func DecodeAt(raw []byte, v any, root string) error {
	warnings, err := DecodeWarnings(raw, v, root)
	for _, w := range warnings {
		policy.Log.Warnf("%s", w)
	}
	return err
}

// DecodeWarnings is DecodeAt returning the warnings, in document order with
// fields sorted, instead of logging them. On error v is left alone.
func DecodeWarnings(raw []byte, v any, root string) ([]Warning, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, fmt.Errorf("policyconfig.Decode: want a non-nil pointer, got %T", v)
	}
	doc, err := parseReflect(raw, root)
	if err != nil || doc == nil {
		return nil, err
	}
	var c checker
	c.check(doc, rv.Type().Elem(), root)
	if err := c.errs.Err(); err != nil {
		return nil, err
	}
	js, err := jsontext.Append(nil, dropNulls(doc))
	if err == nil {
		err = json.Unmarshal(js, v)
	}
	if err != nil {
		return nil, Errorf(root, "%v", err)
	}
	return c.warnings, nil
}

// parse reads raw (YAML or JSON; in a module JSON only) with
// jsontext.Parse, as DecodeFunc reads it; nil for an empty or null document.
func parse(raw []byte, root string) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	js, err := toJSON(raw, jsontext.Valid)
	if err != nil {
		return nil, Errorf(root, "%v", err)
	}
	doc, err := jsontext.Parse(js)
	if err != nil {
		return nil, Errorf(root, "not %s: %v", accepted, err)
	}
	return doc, nil
}

// parseReflect is parse for Decode, with encoding/json, which Decode links
// anyway (a module that uses only Decode then carries no second JSON
// reader); its numbers become jsontext.Number, as parse gives them.
func parseReflect(raw []byte, root string) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	js, err := toJSON(raw, json.Valid)
	if err != nil {
		return nil, Errorf(root, "%v", err)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, Errorf(root, "not %s: %v", accepted, err)
	}
	return renumber(doc), nil
}

// renumber turns encoding/json's numbers into jsontext's, in place.
func renumber(doc any) any {
	switch d := doc.(type) {
	case json.Number:
		return jsontext.Number(d)
	case map[string]any:
		for k, v := range d {
			d[k] = renumber(v)
		}
	case []any:
		for i, v := range d {
			d[i] = renumber(v)
		}
	}
	return doc
}

// checker walks a document, collecting every error and warning.
type checker struct {
	errs     Errors
	warnings []Warning
}

// dropNulls removes null-valued object fields, so they keep their defaults
// (encoding/json would reset a pointer, map or slice).
func dropNulls(doc any) any {
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			if v == nil {
				delete(d, k)
			} else {
				d[k] = dropNulls(v)
			}
		}
	case []any:
		for i, v := range d {
			d[i] = dropNulls(v)
		}
	}
	return doc
}

// Errorf returns the INVALID_ARGUMENT error for the field at path.
func Errorf(path, format string, args ...any) *abi.PolicyError {
	return abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, path, format, args...)
}

// Path joins a path and its parts: a string is a field name, an int a list
// index. Path("config", "balloonTypes", 2, "minCPUs") is
// "config.balloonTypes[2].minCPUs".
func Path(path string, parts ...any) string {
	var b strings.Builder
	b.WriteString(path)
	for _, p := range parts {
		switch p := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, p)
		}
	}
	return b.String()
}

// check compares a decoded JSON value with the Go type it will fill.
func (c *checker) check(doc any, t reflect.Type, path string) {
	if doc == nil {
		return // null keeps the default
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		raw, _ := jsontext.Append(nil, doc)
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			c.errs.Add(path, "%v", err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		c.check(doc, t.Elem(), path)
	case reflect.Interface:
	case reflect.Struct:
		c.checkStruct(doc, t, path)
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			c.want(path, "an object", doc)
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			c.check(obj[k], t.Elem(), Path(path, k))
		}
	case reflect.Slice:
		list, ok := doc.([]any)
		if !ok {
			c.want(path, "a list", doc)
		}
		for i, e := range list {
			c.check(e, t.Elem(), Path(path, i))
		}
	case reflect.String:
		if _, ok := doc.(string); !ok {
			c.want(path, "a string", doc)
		}
	case reflect.Bool:
		if _, ok := doc.(bool); !ok {
			c.want(path, "true or false", doc)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := doc.(jsontext.Number)
		i, err := n.Int64()
		if !ok || err != nil {
			c.want(path, "an integer", doc)
		}
		if lo, hi := intRange(t); i < lo || i > hi {
			c.errs.Add(path, "%d is out of range [%d, %d]", i, lo, hi)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := doc.(jsontext.Number)
		i, err := n.Int64()
		if !ok || err != nil {
			c.want(path, "a non-negative integer", doc)
		}
		if hi := uint64(1)<<(t.Bits()-1)*2 - 1; i < 0 || uint64(i) > hi {
			c.errs.Add(path, "%d is out of range [0, %d]", i, hi)
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := doc.(jsontext.Number); !ok {
			c.want(path, "a number", doc)
		}
	default:
		c.errs.Add(path, "policyconfig cannot decode a %s", t)
	}
}

func (c *checker) checkStruct(doc any, t reflect.Type, path string) {
	fields := jsonFields(t)
	c.object(doc, path, reflect.Zero(t).Interface(), slices.Sorted(maps.Keys(fields)), func(k string, v any, path string) {
		c.check(v, fields[k], path)
	})
}

// object checks that doc is an object whose fields are known (visited, in
// sorted order, with their paths), or sorted by known's Ignorer, Restricter
// and Unsupporter methods; any other field fails.
func (c *checker) object(doc any, path string, known any, names []string, visit func(k string, v any, path string)) {
	obj, ok := doc.(map[string]any)
	if !ok {
		c.want(path, "an object", doc)
		return
	}
	var (
		unsupported map[string]string
		ignored     map[string]string
		restricted  map[string]Restriction
	)
	if u, ok := known.(Unsupporter); ok {
		unsupported = u.UnsupportedFields()
	}
	if i, ok := known.(Ignorer); ok {
		ignored = i.IgnoredFields()
	}
	if r, ok := known.(Restricter); ok {
		restricted = r.RestrictedFields()
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if _, ok := slices.BinarySearch(names, k); ok {
			visit(k, obj[k], Path(path, k))
			continue
		}
		if why, ok := ignored[k]; ok {
			c.warnings = append(c.warnings, Warning{Field: Path(path, k), Why: why})
			continue
		}
		if r, ok := restricted[k]; ok {
			if !r.accepts(obj[k]) {
				c.errs.Add(Path(path, k), "%s is not supported (accepted: %s): %s", jsonText(obj[k]), r.accepted(), r.Why)
			}
			continue
		}
		if why, ok := unsupported[k]; ok {
			c.errs.Add(Path(path, k), "not supported: %s", why)
			continue
		}
		c.errs.Add(Path(path, k), "unknown field (known: %s)", strings.Join(names, ", "))
	}
}

func (r Restriction) accepts(v any) bool {
	got := jsonText(v)
	for _, a := range r.Accept {
		if jsonText(a) == got {
			return true
		}
	}
	return false
}

func (r Restriction) accepted() string {
	var texts []string
	for _, a := range r.Accept {
		texts = append(texts, jsonText(a))
	}
	return strings.Join(texts, " or ")
}

// jsonText is v as compact JSON; null for a value that has none.
func jsonText(v any) string {
	js, err := jsontext.Append(nil, v)
	if err != nil {
		return "null"
	}
	return string(js)
}

// jsonFields maps a struct's JSON field names to their types, embedded
// structs' fields included.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			maps.Copy(fields, jsonFields(f.Type))
		case f.IsExported() && name != "":
			fields[name] = f.Type
		}
	}
	return fields
}

func intRange(t reflect.Type) (int64, int64) {
	if t.Bits() == 64 {
		return math.MinInt64, math.MaxInt64
	}
	hi := int64(1)<<(t.Bits()-1) - 1
	return -hi - 1, hi
}

func (c *checker) want(path, what string, got any) {
	c.errs.Add(path, "want %s, got %s", what, describe(got))
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case jsontext.Number:
		return "the number " + v.String()
	case bool:
		return fmt.Sprintf("%t", v)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", v)
}
