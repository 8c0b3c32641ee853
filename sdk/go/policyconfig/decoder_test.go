package policyconfig_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// handItem and handConfig are what a policy decoding by hand fills: the
// types Decode's reflection reads from their tags, with their field
// sorters.
type handItem struct {
	Name  string   `json:"name"`
	Count int      `json:"count"`
	Tags  []string `json:"tags"`
	Level string   `json:"level"`
}

func (handItem) UnsupportedFields() map[string]string {
	return map[string]string{"colour": "items have no colour here"}
}

type handConfig struct {
	Pin   *bool       `json:"pin"`
	On    bool        `json:"on"`
	Items []*handItem `json:"items"`
	Inner *handItem   `json:"inner"`
}

func (handConfig) IgnoredFields() map[string]string {
	return map[string]string{"log": "logged elsewhere"}
}

func (handConfig) RestrictedFields() map[string]policyconfig.Restriction {
	return map[string]policyconfig.Restriction{"mode": {Accept: []any{"plain", false, []any{}}, Why: "only plain"}}
}

func decodeHandItem(d *policyconfig.Decoder, v policyconfig.Value, it *handItem) {
	d.Object(v, handItem{}, map[string]func(policyconfig.Value){
		"name":  func(v policyconfig.Value) { d.String(v, &it.Name) },
		"count": func(v policyconfig.Value) { d.Int(v, &it.Count) },
		"tags":  func(v policyconfig.Value) { d.Strings(v, &it.Tags) },
		"level": func(v policyconfig.Value) { d.String(v, &it.Level) },
	})
}

func decodeHandConfig(d *policyconfig.Decoder, v policyconfig.Value, c *handConfig) {
	d.Object(v, handConfig{}, map[string]func(policyconfig.Value){
		"pin": func(v policyconfig.Value) { d.BoolPtr(v, &c.Pin) },
		"on":  func(v policyconfig.Value) { d.Bool(v, &c.On) },
		"items": func(v policyconfig.Value) {
			policyconfig.List(d, v, &c.Items, func(v policyconfig.Value, it **handItem) {
				*it = new(handItem)
				decodeHandItem(d, v, *it)
			})
		},
		"inner": func(v policyconfig.Value) {
			if c.Inner == nil {
				c.Inner = new(handItem)
			}
			decodeHandItem(d, v, c.Inner)
		},
	})
}

// TestDecodeFuncAsDecode decodes each document both ways: by reflection
// (Decode) and by hand (DecodeFunc); the values, warnings and errors (field
// and message, every error in one) are the same.
func TestDecodeFuncAsDecode(t *testing.T) {
	docs := []string{
		``, `null`, `{}`, `[1]`, `"x"`, `a: [1`,
		`{pin: false, on: true, items: [{name: a, count: 3, tags: [x, y]}, null, {}], inner: {name: i}}`,
		`{pin: null, items: [], inner: null, log: {level: debug}}`,
		`{items: [{tags: []}, {tags: [a, null]}]}`,
		`{pin: "yes", on: 1, items: {name: a}}`,
		`{items: [{name: 1, count: 1.5, tags: x, level: [], colour: red, size: 3}]}`,
		`{items: [{count: 1e3}, {count: -0}, {count: 99999999999999999999}]}`,
		`{mode: plain}`, `{mode: false}`, `{mode: []}`, `{mode: fancy}`, `{mode: {a: "<&>"}}`,
		`{inner: [1], other: 2, another: 3}`,
		`{"items": [{"name": "\u2028 <b> & é"}]}`,
	}
	for _, doc := range docs {
		t.Run(doc, func(t *testing.T) {
			var byReflection handConfig
			wantWarnings, wantErr := policyconfig.DecodeWarnings([]byte(doc), &byReflection, policyconfig.Root)
			var byHand handConfig
			gotWarnings, gotErr := policyconfig.DecodeFunc([]byte(doc), policyconfig.Root, func(d *policyconfig.Decoder, v policyconfig.Value) {
				decodeHandConfig(d, v, &byHand)
			})
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("DecodeFunc: %v\nDecode:     %v", gotErr, wantErr)
			}
			if wantErr != nil {
				return
			}
			if !slices.Equal(gotWarnings, wantWarnings) {
				t.Errorf("warnings %v, Decode's %v", gotWarnings, wantWarnings)
			}
			if !reflect.DeepEqual(byHand, byReflection) {
				t.Errorf("DecodeFunc filled %+v, Decode %+v", byHand, byReflection)
			}
		})
	}
}

func TestDecoderFailf(t *testing.T) {
	_, err := policyconfig.DecodeFunc([]byte(`{a: 1}`), "cfg", func(d *policyconfig.Decoder, v policyconfig.Value) {
		if v.JSON() != `{"a":1}` {
			t.Errorf("JSON() = %s", v.JSON())
		}
		d.Failf(policyconfig.Path(v.Path, "a"), "%s is wrong", "one")
		d.Failf(policyconfig.Path(v.Path, "b"), "two")
	})
	if got, want := fmt.Sprint(err), "INVALID_ARGUMENT: cfg.a: one is wrong (and 1 more: cfg.b: two)"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
}
