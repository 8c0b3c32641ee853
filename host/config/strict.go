package config

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

// decodeStrict decodes JSON into v after checking every field against v's type,
// so that errors name the field by its path ("policy.memoryLimit: ...").
func decodeStrict(data []byte, v any) error {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	if doc == nil { // an empty file
		return nil
	}
	if err := checkShape(doc, reflect.TypeOf(v).Elem(), ""); err != nil {
		return err
	}
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// checkShape compares a decoded JSON value with the Go type it will fill.
func checkShape(doc any, t reflect.Type, path string) error {
	if doc == nil {
		return nil // null leaves the default
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		raw, _ := json.Marshal(doc)
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("%s: %w", path, err)
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
	case reflect.String:
		if _, ok := doc.(string); !ok {
			want = "a string"
		}
	case reflect.Bool:
		if _, ok := doc.(bool); !ok {
			want = "true or false"
		}
	case reflect.Int:
		if n, ok := doc.(json.Number); !ok {
			want = "an integer"
		} else if _, err := n.Int64(); err != nil {
			want = "an integer"
		}
	}
	if want != "" {
		return fmt.Errorf("%s: got %s, want %s", path, describe(doc), want)
	}
	return nil
}

// jsonFields maps a struct's JSON field names to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
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
