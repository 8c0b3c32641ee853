package strictjson

import (
	"strings"
	"testing"
)

type inner struct {
	Name string `json:"name"`
}

type embedded struct {
	Shared bool `json:"shared"`
}

type doc struct {
	embedded
	Count  int               `json:"count"`
	Ratio  float64           `json:"ratio"`
	Items  []inner           `json:"items"`
	Labels map[string]string `json:"labels"`
	Next   *inner            `json:"next"`
}

func TestDecodeNamesTheField(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"cnt": 1}`, "root.cnt: unknown field (root has count, items, labels, next, ratio, shared)"},
		{`{"count": 1.5}`, "root.count: got the number 1.5, want an integer"},
		{`{"ratio": "x"}`, `root.ratio: got the string "x", want a number`},
		{`{"items": {}}`, "root.items: got an object, want a list"},
		{`{"items": [{"name": "a"}, {"nam": "b"}]}`, "root.items[1].nam: unknown field (root.items[1] has name)"},
		{`{"labels": {"a": 1}}`, "root.labels.a: got the number 1, want a string"},
		{`{"next": {"name": true}}`, "root.next.name: got true, want a string"},
		{`{"shared": "yes"}`, `root.shared: got the string "yes", want true or false`},
		{`[1]`, "root: got a list, want an object"},
		{`{"count": 1`, "root: unexpected EOF"},
	} {
		var d doc
		err := Decode([]byte(tc.in), &d, "root")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestDecodeFillsTheValue(t *testing.T) {
	var d doc
	d.Count = 7
	if err := Decode([]byte(`{"shared": true, "items": [{"name": "a"}], "labels": {"k": "v"}, "next": null}`), &d, ""); err != nil {
		t.Fatal(err)
	}
	if !d.Shared || d.Count != 7 || len(d.Items) != 1 || d.Items[0].Name != "a" || d.Labels["k"] != "v" || d.Next != nil {
		t.Errorf("Decode = %+v", d)
	}
	if err := Decode([]byte(`null`), &d, ""); err != nil || d.Count != 7 {
		t.Errorf("Decode(null) = %v, %+v; want nothing changed", err, d)
	}
}
