package policyconfig_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
	"sigs.k8s.io/yaml"
)

type level string

func (l *level) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil || (s != "low" && s != "high") {
		return fmt.Errorf("want \"low\" or \"high\", got %s", b)
	}
	*l = level(s)
	return nil
}

type item struct {
	Name  string `json:"name"`
	Count int8   `json:"count"`
	Level level  `json:"level"`
}

func (item) UnsupportedFields() map[string]string {
	return map[string]string{"colour": "items have no colour here"}
}

type config struct {
	Pin    *bool             `json:"pin"`
	Limit  uint16            `json:"limit"`
	Ratio  float64           `json:"ratio"`
	Items  []item            `json:"items"`
	Labels map[string]string `json:"labels"`
	hidden int
}

// decodeCases are refused documents: the field and message each error has.
var decodeCases = []struct {
	name, doc, field, msg string
}{
	{"unknown top", "pinn: true", "config.pinn", "unknown field (known: items, labels, limit, pin, ratio)"},
	{"unknown nested", "items: [{name: a}, {nme: b}]", "config.items[1].nme", "unknown field"},
	{"unsupported", "items: [{colour: red}]", "config.items[0].colour", "not supported: items have no colour here"},
	{"bool", "pin: maybe", "config.pin", `want true or false, got the string "maybe"`},
	{"int range", "items: [{count: 200}]", "config.items[0].count", "200 is out of range [-128, 127]"},
	{"uint negative", "limit: -1", "config.limit", "out of range [0, 65535]"},
	{"not int", "limit: 1.5", "config.limit", "want a non-negative integer, got the number 1.5"},
	{"unmarshaler", "items: [{level: mid}]", "config.items[0].level", `want "low" or "high"`},
	{"list", "items: {name: a}", "config.items", "want a list, got an object"},
	{"map value", "labels: {a: [1]}", "config.labels.a", "want a string, got a list"},
	{"top", "[1, 2]", "config", "want an object, got a list"},
	{"syntax", "a: [1", "config", "not YAML or JSON"},
}

func TestDecode(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) { checkRefused(t, []byte(tc.doc), tc.field, tc.msg) })
	}
}

// TestDecodeHostConverted decodes every refused document as a Wasm module
// does: converted to JSON by the host (the same sigs.k8s.io/yaml conversion),
// read as JSON only. Each is refused at the same field with the same message;
// a document that does not convert never reaches the policy (the host answers
// it, host/wasm's TestConfigFormat).
func TestDecodeHostConverted(t *testing.T) {
	policyconfig.JSONOnly(t)
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			js, err := yaml.YAMLToJSON([]byte(tc.doc))
			if err != nil {
				if tc.name != "syntax" {
					t.Fatalf("the host cannot convert %q: %v", tc.doc, err)
				}
				return
			}
			checkRefused(t, js, tc.field, tc.msg)
		})
	}
	var c config
	if err := policyconfig.Decode([]byte(`{"limit": 7, "items": [{"name": "a", "level": "low"}]}`), &c); err != nil || c.Limit != 7 || c.Items[0].Level != "low" {
		t.Errorf("Decode(JSON) = %v, %+v", err, c)
	}
}

// TestDecodeRefusesYAMLInAModule: YAML that reaches a module came from a
// host that predates config_format; the error says so.
func TestDecodeRefusesYAMLInAModule(t *testing.T) {
	policyconfig.JSONOnly(t)
	checkRefused(t, []byte("limit: 7\n"), "config", "not JSON: this policy reads its configuration as JSON (PolicyMetadata.config_format)")
	if _, err := policyconfig.JSON([]byte("limit: 7\n")); err == nil {
		t.Error("JSON accepted YAML in a module")
	}
	testJSONOfBlank(t)
}

// testJSONOfBlank: a blank configuration (which the host sends as it is) is
// null to JSON, in a module as outside one.
func testJSONOfBlank(t *testing.T) {
	t.Helper()
	for _, blank := range []string{"", " \n"} {
		if js, err := policyconfig.JSON([]byte(blank)); err != nil || string(js) != "null" {
			t.Errorf("JSON(%q) = %s, %v, want null", blank, js, err)
		}
	}
}

func TestJSON(t *testing.T) {
	js, err := policyconfig.JSON([]byte("limit: 7\nitems: [{name: a}]\n"))
	if err != nil || string(js) != `{"items":[{"name":"a"}],"limit":7}` {
		t.Errorf("JSON = %s, %v", js, err)
	}
	if _, err := policyconfig.JSON([]byte("a: [1")); err == nil || err.(*abi.PolicyError).Field != "config" {
		t.Errorf("JSON(bad) = %v, want an error at config", err)
	}
	testJSONOfBlank(t)
}

// TestLinkingDeclaresJSON: a policy that links policyconfig asks the host for
// JSON.
func TestLinkingDeclaresJSON(t *testing.T) {
	d, err := policy.NewDispatcher(named("p"))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Metadata().GetConfigFormat(); got != abi.ConfigFormat_CONFIG_FORMAT_JSON {
		t.Errorf("config_format = %v, want JSON", got)
	}
}

type named string

func (n named) Describe() policy.Description {
	return policy.Description{Name: string(n), Version: "1.0.0"}
}

func checkRefused(t *testing.T, doc []byte, field, msg string) {
	t.Helper()
	var c config
	err := policyconfig.Decode(doc, &c)
	pe, ok := errors.AsType[*abi.PolicyError](err)
	if !ok {
		t.Fatalf("Decode(%q) = %v, want a PolicyError", doc, err)
	}
	if pe.Code != abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || pe.Field != field || !strings.Contains(pe.Message, msg) {
		t.Errorf("Decode(%q) = %v (field %q), want field %q and a message with %q", doc, pe, pe.Field, field, msg)
	}
}

func TestDecodeKeepsDefaults(t *testing.T) {
	on := true
	c := config{Pin: &on, Limit: 7, hidden: 3}
	if err := policyconfig.Decode([]byte("ratio: 0.5\nitems:\n- {name: a, count: -3, level: high}\npin: null\n"), &c); err != nil {
		t.Fatal(err)
	}
	if c.Pin == nil || !*c.Pin || c.Limit != 7 || c.Ratio != 0.5 || c.hidden != 3 {
		t.Errorf("defaults lost: %+v", c)
	}
	if len(c.Items) != 1 || c.Items[0] != (item{Name: "a", Count: -3, Level: "high"}) {
		t.Errorf("items = %+v", c.Items)
	}
	for _, empty := range []string{"", "  \n", "null", "{}"} {
		d := config{Limit: 9}
		if err := policyconfig.Decode([]byte(empty), &d); err != nil || d.Limit != 9 {
			t.Errorf("Decode(%q) = %v, limit %d", empty, err, d.Limit)
		}
	}
	if err := policyconfig.Decode([]byte("{}"), c); err == nil {
		t.Error("a non-pointer was accepted")
	}
}

func TestDecodeAt(t *testing.T) {
	var c config
	for root, want := range map[string]string{"": "items[0].nme", "scenario.steps[2]": "scenario.steps[2].items[0].nme"} {
		err := policyconfig.DecodeAt([]byte("items: [{nme: x}]"), &c, root)
		if pe, ok := errors.AsType[*abi.PolicyError](err); !ok || pe.Field != want {
			t.Errorf("DecodeAt under %q = %v, want field %q", root, err, want)
		}
	}
}

func TestPath(t *testing.T) {
	if got := policyconfig.Path("config", "balloonTypes", 2, "minCPUs"); got != "config.balloonTypes[2].minCPUs" {
		t.Errorf("Path = %q", got)
	}
	if got := policyconfig.Path("", "a", 0); got != "a[0]" {
		t.Errorf("Path = %q", got)
	}
}

func ExampleDecode() {
	var cfg struct {
		MinCPUs int `json:"minCPUs"`
	}
	err := policyconfig.Decode([]byte("minCPU: 2\n"), &cfg)
	pe, _ := errors.AsType[*abi.PolicyError](err)
	fmt.Println(pe.Field+":", pe.Message)
	// Output: config.minCPU: unknown field (known: minCPUs)
}

// carried is a configuration that follows another project's: it ignores
// that project's logging section, accepts its "colocate" only at false and
// refuses "classes".
type carried struct {
	Pin bool `json:"pin"`
}

func (carried) IgnoredFields() map[string]string {
	return map[string]string{"log": "logging is the host's", "metrics": "no endpoint here"}
}

func (carried) RestrictedFields() map[string]policyconfig.Restriction {
	return map[string]policyconfig.Restriction{
		"colocate": {Accept: []any{false}, Why: "not implemented"},
		"priority": {Accept: []any{"none", ""}, Why: "CPU priorities are not read"},
		"classes":  {Accept: []any{[]any{}}, Why: "no classes"},
	}
}

func (carried) UnsupportedFields() map[string]string {
	return map[string]string{"irq": "interrupts are not steered"}
}

func TestDecodeWarningsAndRestrictions(t *testing.T) {
	var c carried
	doc := "pin: true\nlog: {debug: [none]}\nmetrics: {port: 8891}\ncolocate: false\npriority: none\nclasses: []\n"
	warnings, err := policyconfig.DecodeWarnings([]byte(doc), &c, "config")
	if err != nil || !c.Pin {
		t.Fatalf("DecodeWarnings = %v, pin %t", err, c.Pin)
	}
	want := []policyconfig.Warning{{Field: "config.log", Why: "logging is the host's"}, {Field: "config.metrics", Why: "no endpoint here"}}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings = %v, want %v", warnings, want)
	}
	if got := warnings[0].String(); got != "config.log: ignored: logging is the host's" {
		t.Errorf("String() = %q", got)
	}
}

func TestDecodeReportsEveryRefusalInOneError(t *testing.T) {
	c := carried{Pin: true}
	doc := "colocate: true\npriority: high\nclasses: [a]\nirq: [eth0]\npinn: false\npin: 3\nlog: {}\n"
	_, err := policyconfig.DecodeWarnings([]byte(doc), &c, "config")
	pe, ok := errors.AsType[*abi.PolicyError](err)
	if !ok {
		t.Fatalf("DecodeWarnings = %v, want a PolicyError", err)
	}
	if pe.Field != "config.classes" {
		t.Errorf("field = %q, want the first refused field config.classes", pe.Field)
	}
	for _, part := range []string{
		`["a"] is not supported (accepted: []): no classes`,
		`and 5 more:`,
		`config.colocate: true is not supported (accepted: false): not implemented`,
		`config.irq: not supported: interrupts are not steered`,
		`config.pin: want true or false, got the number 3`,
		`config.pinn: unknown field`,
		`config.priority: "high" is not supported (accepted: "none" or ""): CPU priorities are not read`,
	} {
		if !strings.Contains(pe.Message, part) {
			t.Errorf("message %q lacks %q", pe.Message, part)
		}
	}
	if !c.Pin {
		t.Error("a refused document changed the configuration")
	}
}

func ExampleRestricter() {
	var c carried
	err := policyconfig.Decode([]byte("colocate: true\nirq: [eth0]\n"), &c)
	pe, _ := errors.AsType[*abi.PolicyError](err)
	fmt.Println(pe.Field + ": " + pe.Message)
	// Output: config.colocate: true is not supported (accepted: false): not implemented (and 1 more: config.irq: not supported: interrupts are not steered)
}

func TestDecodeLogsWarnings(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	var c carried
	if err := policyconfig.Decode([]byte("log: {}\n"), &c); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, `"config.log: ignored: logging is the host's"`) {
		t.Errorf("policy log = %q, want the warning", got)
	}
}
