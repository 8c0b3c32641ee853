package expr_test

import (
	"errors"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/expr"
)

var (
	pod = &abi.PodSandbox{Name: "web-0", Namespace: "prod", Uid: "u1", Id: "p1", Labels: map[string]string{"app": "web", "tier": "front"},
		QosClass: abi.QOSClass_QOS_CLASS_BURSTABLE}
	ctr = &abi.Container{Id: "c1", Name: "nginx", Labels: map[string]string{"gpu": ""}}
)

// TestMatches follows nri-plugins' Evaluate: "*" in Equals and In stands
// for any value of a present key, an empty In matches nothing and an empty
// NotIn (or MatchesNone) everything.
func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		e    expr.Expression
		want bool
	}{
		{expr.Expression{Operator: expr.AlwaysTrue}, true},
		{expr.Expression{Key: "name", Operator: expr.Equals, Values: []string{"nginx"}}, true},
		{expr.Expression{Key: "name", Operator: expr.Equals, Values: []string{"*"}}, true},
		{expr.Expression{Key: "labels/none", Operator: expr.Equals, Values: []string{"*"}}, false},
		{expr.Expression{Key: "labels/none", Operator: expr.NotEqual, Values: []string{"x"}}, true},
		{expr.Expression{Key: "pod/labels/app", Operator: expr.In, Values: []string{"db", "web"}}, true},
		{expr.Expression{Key: "pod/labels/app", Operator: expr.In, Values: []string{"*"}}, true},
		{expr.Expression{Key: "pod/labels/app", Operator: expr.In}, false},
		{expr.Expression{Key: "pod/labels/app", Operator: expr.NotIn}, true},
		{expr.Expression{Key: "pod/labels/app", Operator: expr.NotIn, Values: []string{"web"}}, false},
		{expr.Expression{Key: "pod/labels/none", Operator: expr.NotIn, Values: []string{"web"}}, true},
		{expr.Expression{Key: "labels/gpu", Operator: expr.Exists}, true},
		{expr.Expression{Key: "labels/gpu", Operator: expr.NotExist}, false},
		{expr.Expression{Key: "pod/name", Operator: expr.Matches, Values: []string{"web-*"}}, true},
		{expr.Expression{Key: "pod/name", Operator: expr.MatchesNot, Values: []string{"web-*"}}, false},
		{expr.Expression{Key: "namespace", Operator: expr.MatchesAny, Values: []string{"x-*", "pro?"}}, true},
		{expr.Expression{Key: "namespace", Operator: expr.MatchesAny}, false},
		{expr.Expression{Key: "namespace", Operator: expr.MatchesNone}, true},
		{expr.Expression{Key: "qosclass", Operator: expr.Equals, Values: []string{"Burstable"}}, true}, // the pod's class
		{expr.Expression{Key: "pod/uid", Operator: expr.Equals, Values: []string{"u1"}}, true},
		{expr.Expression{Key: "id", Operator: expr.Equals, Values: []string{"c1"}}, true},
		{expr.Expression{Key: "name", Operator: "Like", Values: []string{"nginx"}}, false},
	} {
		if got := tc.e.Matches(pod, ctr); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.e, got, tc.want)
		}
	}
	if (&expr.Expression{Key: "name", Operator: expr.Exists}).Matches(pod, nil) {
		t.Error("an expression matched no container")
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		e          expr.Expression
		field, msg string
	}{
		{expr.Expression{Key: "name", Operator: "Like"}, "operator", "AlwaysTrue, Equals"},
		{expr.Expression{Key: "color", Operator: expr.Exists}, "key", "pod/labels/KEY"},
		{expr.Expression{Key: "labels/", Operator: expr.Exists}, "key", "labels/KEY"},
		{expr.Expression{Key: "name", Operator: expr.Equals}, "values", "takes 1 values, got 0"},
		{expr.Expression{Key: "name", Operator: expr.Exists, Values: []string{"x"}}, "values", "takes 0 values"},
		{expr.Expression{Key: "name", Operator: expr.MatchesAny, Values: []string{"[x"}}, "values", "bad pattern"},
		{expr.Expression{Key: "name", Operator: expr.In}, "", ""},
		{expr.Expression{Operator: expr.AlwaysTrue}, "", ""},
	} {
		err := tc.e.Validate()
		var fe *expr.FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%+v: %v, want valid", tc.e, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.msg)):
			t.Errorf("%+v: %v; want a refusal of %s with %q", tc.e, err, tc.field, tc.msg)
		}
	}
}

// TestExpand: groupBy references as nri-plugins' Expand reads them.
func TestExpand(t *testing.T) {
	values := map[string]string{"pod/namespace": "prod", "pod/labels/app": "web", "name": "c"}
	lookup := func(k string) (string, bool) { v, ok := values[k]; return v, ok }
	for _, tc := range []struct{ in, want, err string }{
		{"${pod/namespace}-${pod/labels/app}", "prod-web", ""},
		{"ns=$pod/namespace", "ns=prod", ""},
		{"$pod/namespace$name", "prodc", ""},
		{"a$$b", "a$b", ""},
		{"${pod/labels/none}x", "x", ""},
		{"x${name", "", "unterminated"},
		{"${pod/colour}", "", "unknown key"},
		{"x$", "", "unknown key"},
	} {
		got, err := expr.Expand(tc.in, lookup)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Expand(%q): %q, %v; want an error with %q", tc.in, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("Expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
