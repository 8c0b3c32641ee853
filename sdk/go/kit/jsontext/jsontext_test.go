package jsontext

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fromEncodingJSON is data decoded as encoding/json decodes it into an any
// with UseNumber, its numbers as Number.
func fromEncodingJSON(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return renumber(v)
}

func renumber(v any) any {
	switch v := v.(type) {
	case json.Number:
		return Number(v)
	case map[string]any:
		for k, e := range v {
			v[k] = renumber(e)
		}
	case []any:
		for i, e := range v {
			v[i] = renumber(e)
		}
	}
	return v
}

// documents are valid JSON, each read by Parse as by encoding/json.
var documents = []string{
	`null`, `true`, `false`, `0`, `-0`, `12.5e-3`, `1E+2`, `-7`, `""`, `{}`, `[]`,
	` {"a": [1, "x", null, true, {"b": {}}], "c": -0.5} `,
	`{"a":1,"a":2}`,
	`"esc \" \\ \/ \b \f \n \r \t \u00e9 \u2028 \ud83d\ude00"`,
	`"lone \ud83d surrogate"`, `"low \ude00 first"`, `"pair then \ud83d\u0041"`,
	"\"invalid \xff utf-8 \xe2\x82\"",
	"\"raw \xe2\x82\xac and \\n\"",
	`{"balloonTypes":[{"name":"x","minCPUs":2,"cpuClass":""}],"pinCPU":false}`,
}

func TestParseAsEncodingJSON(t *testing.T) {
	for _, doc := range documents {
		got, err := Parse([]byte(doc))
		if err != nil {
			t.Errorf("Parse(%s): %v", doc, err)
			continue
		}
		if want := fromEncodingJSON(t, []byte(doc)); !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%s) = %#v, encoding/json %#v", doc, got, want)
		}
	}
}

// TestValidAsEncodingJSON compares Valid with json.Valid on broken
// documents and on every prefix of the valid ones.
func TestValidAsEncodingJSON(t *testing.T) {
	broken := []string{``, ` `, `{`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`,
		`+1`, `tru`, `nul`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"tab\there\"", `"open`, `1 2`, `[1] x`, `{"a":1}}`,
		`NaN`, `'a'`, `[`, `]`, "\x00"}
	for _, doc := range broken {
		if got, want := Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid %v", doc, got, want)
		}
	}
	for _, doc := range documents {
		for i := range len(doc) + 1 {
			if got, want := Valid([]byte(doc[:i])), json.Valid([]byte(doc[:i])); got != want {
				t.Errorf("Valid(%q) = %v, json.Valid %v", doc[:i], got, want)
			}
		}
	}
	if _, err := Parse([]byte(`{"a": x}`)); err == nil || !strings.Contains(err.Error(), "byte 6") {
		t.Errorf("Parse's error %v does not name byte 6", err)
	}
	deep := strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)
	if Valid([]byte(deep)) || json.Valid([]byte(deep)) {
		t.Errorf("a document nested %d deep is valid", maxDepth+2)
	}
}

func TestAppendAsEncodingJSON(t *testing.T) {
	values := []any{nil, true, false, "", 3, int64(-4), Number("1.5e3"),
		[]string{}, []string(nil), []string{"a<b", "c&d"}, []any{}, []any(nil), map[string]any(nil),
		map[string]any{"z": 1, "a": []any{"x", nil, map[string]any{}}, "<": "\u2029"}}
	for _, doc := range documents {
		values = append(values, fromEncodingJSON(t, []byte(doc)))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune{'a', '"', '\\', '/', '<', '>', '&', '\u2028', '\u2029', 'é', '€', '😀', 0, 1, '\b', '\f', '\n', '\r', '\t', 0x1f, 0x7f}
	for range 2000 {
		var b strings.Builder
		for n := rng.IntN(8); n > 0; n-- {
			if rng.IntN(10) == 0 {
				b.WriteByte(0x80 + byte(rng.IntN(0x40))) // invalid UTF-8
				continue
			}
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		values = append(values, b.String())
	}
	for _, v := range values {
		got, err := Append(nil, v)
		if err != nil {
			t.Errorf("Append(%#v): %v", v, err)
			continue
		}
		want, err := json.Marshal(toEncodingJSON(v))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Append(%#v) = %s, json.Marshal %s", v, got, want)
		}
	}
	if _, err := Append(nil, 1.5); err == nil || !strings.Contains(err.Error(), "float64") {
		t.Errorf("Append(1.5) = %v, want an error naming float64", err)
	}
}

func toEncodingJSON(v any) any {
	switch v := v.(type) {
	case Number:
		return json.Number(v)
	case map[string]any:
		if v == nil {
			return v
		}
		out := map[string]any{}
		for k, e := range v {
			out[k] = toEncodingJSON(e)
		}
		return out
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = toEncodingJSON(e)
		}
		return out
	}
	return v
}

func TestNumber(t *testing.T) {
	if i, err := Number("-42").Int64(); i != -42 || err != nil {
		t.Errorf("Int64(-42) = %d, %v", i, err)
	}
	if _, err := Number("1.0").Int64(); err == nil {
		t.Errorf("Int64(1.0) is an integer")
	}
	if f, err := Number("2.5e1").Float64(); f != 25 || err != nil {
		t.Errorf("Float64(2.5e1) = %v, %v", f, err)
	}
	if Number("7").String() != "7" {
		t.Errorf("String")
	}
}

// FuzzParseAsEncodingJSON checks Parse against encoding/json on any input:
// the same documents valid, read to the same values.
func FuzzParseAsEncodingJSON(f *testing.F) {
	for _, doc := range documents {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse(data)
		if (err == nil) != json.Valid(data) {
			t.Fatalf("Parse(%q) error %v, json.Valid %v", data, err, json.Valid(data))
		}
		if err == nil {
			if want := fromEncodingJSON(t, data); !reflect.DeepEqual(got, want) {
				t.Fatalf("Parse(%q) = %#v, encoding/json %#v", data, got, want)
			}
		}
	})
}
