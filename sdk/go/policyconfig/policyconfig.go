// Package policyconfig decodes a policy's configuration strictly: YAML or
// JSON into a Go struct whose `json` tags name the fields, with every unknown
// field, wrong type or out-of-range number refused by an INVALID_ARGUMENT
// *abi.PolicyError whose Field is the path of the offending value
// ("config.balloonTypes[1].minCPUs"). It builds for wasip1, so a policy
// decodes its configuration inside the guest.
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
// is reported at its path. A struct type that implements Unsupporter names
// fields it refuses with a reason of their own (fields of the project this
// configuration follows that the policy does not implement). Semantic checks
// after decoding report with Errorf and Path, so every error names its field
// the same way.
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
	"sigs.k8s.io/yaml"
)

// Root is where Decode starts field paths: a policy's configuration.
const Root = "config"

// Unsupporter is implemented by a configuration struct that refuses some
// field names with a reason: UnsupportedFields maps a field name to why.
type Unsupporter interface {
	UnsupportedFields() map[string]string
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	unsupporterType = reflect.TypeFor[Unsupporter]()
)

// Decode decodes raw (YAML or JSON) into v, a pointer to a struct. An empty
// or null document leaves v alone. Absent and null fields keep v's values.
// Field paths start with Root.
func Decode(raw []byte, v any) error { return DecodeAt(raw, v, Root) }

// DecodeAt is Decode with field paths under root ("" for none), for a
// document that is not a policy's configuration or is part of a larger one.
func DecodeAt(raw []byte, v any, root string) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("policyconfig.Decode: want a non-nil pointer, got %T", v)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return Errorf(root, "not YAML or JSON: %v", err)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return Errorf(root, "not YAML or JSON: %v", err)
	}
	if doc == nil {
		return nil
	}
	if err := check(doc, rv.Type().Elem(), root); err != nil {
		return err
	}
	js, _ = json.Marshal(dropNulls(doc))
	if err := json.Unmarshal(js, v); err != nil {
		return Errorf(root, "%v", err)
	}
	return nil
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
func check(doc any, t reflect.Type, path string) error {
	if doc == nil {
		return nil // null keeps the default
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		raw, _ := json.Marshal(doc)
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			return Errorf(path, "%v", err)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return check(doc, t.Elem(), path)
	case reflect.Interface:
		return nil
	case reflect.Struct:
		return checkStruct(doc, t, path)
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			return want(path, "an object", doc)
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if err := check(obj[k], t.Elem(), Path(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		list, ok := doc.([]any)
		if !ok {
			return want(path, "a list", doc)
		}
		for i, e := range list {
			if err := check(e, t.Elem(), Path(path, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := doc.(string); !ok {
			return want(path, "a string", doc)
		}
	case reflect.Bool:
		if _, ok := doc.(bool); !ok {
			return want(path, "true or false", doc)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := doc.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil {
			return want(path, "an integer", doc)
		}
		if lo, hi := intRange(t); i < lo || i > hi {
			return Errorf(path, "%d is out of range [%d, %d]", i, lo, hi)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := doc.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil {
			return want(path, "a non-negative integer", doc)
		}
		if hi := uint64(1)<<(t.Bits()-1)*2 - 1; i < 0 || uint64(i) > hi {
			return Errorf(path, "%d is out of range [0, %d]", i, hi)
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := doc.(json.Number); !ok {
			return want(path, "a number", doc)
		}
	default:
		return Errorf(path, "policyconfig cannot decode a %s", t)
	}
	return nil
}

func checkStruct(doc any, t reflect.Type, path string) error {
	obj, ok := doc.(map[string]any)
	if !ok {
		return want(path, "an object", doc)
	}
	fields := jsonFields(t)
	var unsupported map[string]string
	if t.Implements(unsupporterType) {
		unsupported = reflect.Zero(t).Interface().(Unsupporter).UnsupportedFields()
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		f, ok := fields[k]
		if !ok {
			if why, ok := unsupported[k]; ok {
				return Errorf(Path(path, k), "not supported: %s", why)
			}
			return Errorf(Path(path, k), "unknown field (known: %s)", strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
		if err := check(obj[k], f, Path(path, k)); err != nil {
			return err
		}
	}
	return nil
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

func want(path, what string, got any) error {
	return Errorf(path, "want %s, got %s", what, describe(got))
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
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
