// Package strictjson is the host's one strict decoder: it decodes JSON (the
// agent's configuration and simulate's scenarios, converted from YAML first)
// into a Go value after checking every field the document holds against the
// value's type, so an error names the offending field by its path
// ("policy.memoryLimit: unknown field (policy has …)") instead of a byte
// offset, and an unknown field is an error rather than silently dropped.
//
// The guest side has its own decoder, sdk/go/policyconfig, which reports
// every bad field at once as the ABI's PolicyError; the host and the SDK
// import nothing of each other (host/RATIONALE.md).
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// Decode decodes data into v, a non-nil pointer, after checking the shape of
// the whole document against v's type. Errors name the field by its path,
// starting at root ("" for the top level). An empty document (null) leaves v
// as it is.
func Decode(data []byte, v any, root string) error {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return prefix(root, err)
	}
	if doc == nil {
		return nil
	}
	if err := checkShape(doc, reflect.TypeOf(v).Elem(), root); err != nil {
		return err
	}
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return prefix(root, err)
	}
	return nil
}

func prefix(path string, err error) error {
	if path == "" {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// checkShape compares a decoded JSON value with the Go type it will fill.
func checkShape(doc any, t reflect.Type, path string) error {
	if doc == nil {
		return nil // null leaves the default
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		raw, err := json.Marshal(doc)
		if err != nil {
			return prefix(path, err)
		}
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			return prefix(path, err)
		}
		return nil
	}
	want := ""
	switch t.Kind() {
	case reflect.Pointer:
		return checkShape(doc, t.Elem(), path)
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			want = "an object"
			break
		}
		fields := jsonFields(t)
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			f, ok := fields[key]
			if !ok {
				known := slices.Sorted(maps.Keys(fields))
				return fmt.Errorf("%s: unknown field (%s has %s)", join(path, key), orTop(path), strings.Join(known, ", "))
			}
			if err := checkShape(obj[key], f, join(path, key)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			want = "an object"
			break
		}
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			if err := checkShape(obj[key], t.Elem(), join(path, key)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		list, ok := doc.([]any)
		if !ok {
			want = "a list"
			break
		}
		for i, e := range list {
			if err := checkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		if _, ok := doc.(string); !ok {
			want = "a string"
		}
	case reflect.Bool:
		if _, ok := doc.(bool); !ok {
			want = "true or false"
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n, ok := doc.(json.Number); !ok {
			want = "an integer"
		} else if _, err := n.Int64(); err != nil {
			want = "an integer"
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := doc.(json.Number); !ok {
			want = "a number"
		}
	}
	if want != "" {
		return fmt.Errorf("%s: got %s, want %s", orTop(path), describe(doc), want)
	}
	return nil
}

// jsonFields maps a struct's JSON field names to their types, with the fields
// of embedded structs promoted as encoding/json promotes them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			maps.Copy(fields, jsonFields(f.Type))
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" && name != "" {
			fields[name] = f.Type
		}
	}
	return fields
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orTop(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
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
