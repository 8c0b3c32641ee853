package policyconfig

import (
	"slices"

	"github.com/nriwasm/nriwasm/sdk/go/kit/jsontext"
)

// Value is a part of a configuration document and where it is: Doc is what
// jsontext.Parse gives (map[string]any, []any, string, bool,
// jsontext.Number), never nil (Decoder skips nulls: they keep defaults).
type Value struct {
	Doc  any
	Path string // "config.balloonTypes[1]"
}

// JSON is v's value as compact JSON, as encoding/json writes it.
func (v Value) JSON() string { return jsonText(v.Doc) }

// Decoder fills a configuration from its document without reflection, for a
// module that should link neither reflect's full weight nor encoding/json
// (docs/performance.md, "Where each guest's bytes go"). A policy writes one
// function per struct type that lists its fields (Object) and fills each
// with the Decoder's methods; it accepts, refuses and reports exactly as
// Decode does for the same struct, provided each field is filled with the
// method of its Go type: String for a string, Int for an int, List for a
// slice, Object for a nested struct, and Fail for a value a type's own
// UnmarshalJSON would refuse, with that method's message.
//
// Unlike Decode, a Decoder fills the target while it walks, so a target is
// only usable when DecodeFunc returns no error: decode into a fresh value.
type Decoder struct{ c checker }

// DecodeFunc reads raw as Decode does (YAML or JSON; in a module JSON only)
// and calls decode on its root value, unless the document is empty or null.
// Field paths start with root. It returns the warnings, and every error in
// one, as DecodeWarnings does.
func DecodeFunc(raw []byte, root string, decode func(d *Decoder, v Value)) ([]Warning, error) {
	doc, err := parse(raw, root)
	if err != nil || doc == nil {
		return nil, err
	}
	var d Decoder
	decode(&d, Value{Doc: doc, Path: root})
	if err := d.c.errs.Err(); err != nil {
		return nil, err
	}
	return d.c.warnings, nil
}

// Failf refuses the field at path (Errors.Add); DecodeFunc returns it with
// the others.
func (d *Decoder) Failf(path, format string, args ...any) {
	d.c.errs.Add(path, format, args...)
}

// Errors is what the Decoder has refused so far. A decode function's checks
// of the values it filled add theirs here, after filling them, so that
// DecodeFunc returns them in the one error with the fields decoding refused;
// a value decoding refused is left at its default, so a check that reads it
// should skip it (Errors.Refused), as Add does for the check's own field.
func (d *Decoder) Errors() *Errors { return &d.c.errs }

// Object decodes an object: fields maps each JSON field name to the
// function that fills it, called in sorted order with the field's value
// unless that is null. known is the struct whose Ignorer, Restricter and
// Unsupporter methods sort the other fields, as Decode does; any field
// neither lists is refused, naming the known ones.
func (d *Decoder) Object(v Value, known any, fields map[string]func(Value)) {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	d.c.object(v.Doc, v.Path, known, names, func(k string, doc any, path string) {
		if doc != nil {
			fields[k](Value{Doc: doc, Path: path})
		}
	})
}

// String fills a string field.
func (d *Decoder) String(v Value, dst *string) {
	if s, ok := v.Doc.(string); ok {
		*dst = s
		return
	}
	d.c.want(v.Path, "a string", v.Doc)
}

// Bool fills a bool field.
func (d *Decoder) Bool(v Value, dst *bool) {
	if b, ok := v.Doc.(bool); ok {
		*dst = b
		return
	}
	d.c.want(v.Path, "true or false", v.Doc)
}

// BoolPtr fills a *bool field, allocating it if nil, as encoding/json does.
func (d *Decoder) BoolPtr(v Value, dst **bool) {
	if *dst == nil {
		*dst = new(bool)
	}
	d.Bool(v, *dst)
}

// Int fills an int field: an integer, as Decode reads one (no fraction or
// exponent; a 64-bit int takes every integer jsontext.Number.Int64 does).
func (d *Decoder) Int(v Value, dst *int) {
	n, ok := v.Doc.(jsontext.Number)
	i, err := n.Int64()
	if !ok || err != nil {
		d.c.want(v.Path, "an integer", v.Doc)
		return
	}
	*dst = int(i)
}

// Strings fills a []string field.
func (d *Decoder) Strings(v Value, dst *[]string) {
	List(d, v, dst, d.String)
}

// List fills a slice field with a new slice of the list's length (an empty
// list gives an empty, non-nil slice, as encoding/json does), filling each
// element with elem unless it is null, which leaves the element's zero
// value (nil for a pointer).
func List[T any](d *Decoder, v Value, dst *[]T, elem func(Value, *T)) {
	list, ok := v.Doc.([]any)
	if !ok {
		d.c.want(v.Path, "a list", v.Doc)
		return
	}
	out := make([]T, len(list))
	for i, e := range list {
		if e != nil {
			elem(Value{Doc: e, Path: Path(v.Path, i)}, &out[i])
		}
	}
	*dst = out
}
