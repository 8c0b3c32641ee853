package scenario

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

// decodeStrict decodes data into v after checking that every field data holds
// is one of v's and has the right JSON type; errors name the field under path.
func decodeStrict(data []byte, v any, path string) error {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := checkShape(doc, reflect.TypeOf(v).Elem(), path); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// checkShape compares a decoded JSON value with the Go type it will fill.
func checkShape(doc any, t reflect.Type, path string) error {
	if doc == nil {
		return nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // the type checks itself
	}
	switch t.Kind() {
	case reflect.Pointer:
		return checkShape(doc, t.Elem(), path)
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			return typeError(path, "an object", doc)
		}
		fields := jsonFields(t)
		for _, key := range sortedKeys(obj) {
			f, ok := fields[key]
			if !ok {
				return fmt.Errorf("%s: unknown field %q (known: %s)", join(path, key), key, strings.Join(sortedKeys(fields), ", "))
			}
			if err := checkShape(obj[key], f.Type, join(path, key)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			return typeError(path, "an object", doc)
		}
		for _, key := range sortedKeys(obj) {
			if err := checkShape(obj[key], t.Elem(), join(path, key)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		list, ok := doc.([]any)
		if !ok {
			return typeError(path, "a list", doc)
		}
		for i, e := range list {
			if err := checkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := doc.(string); !ok {
			return typeError(path, "a string", doc)
		}
	case reflect.Bool:
		if _, ok := doc.(bool); !ok {
			return typeError(path, "true or false", doc)
		}
	}
	return nil
}

func jsonFields(t reflect.Type) map[string]reflect.StructField {
	fields := map[string]reflect.StructField{}
	for f := range t.Fields() {
		if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			maps.Copy(fields, jsonFields(f.Type)) // promoted, as encoding/json does
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = f
		}
	}
	return fields
}

func typeError(path, want string, got any) error {
	var kind string
	switch got.(type) {
	case map[string]any:
		kind = "an object"
	case []any:
		kind = "a list"
	case string:
		kind = "a string"
	case bool:
		kind = "a boolean"
	default:
		kind = "a number"
	}
	return fmt.Errorf("%s: want %s, got %s", path, want, kind)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
