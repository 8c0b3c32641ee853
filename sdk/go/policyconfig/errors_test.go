package policyconfig_test

import (
	"errors"
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policyconfig"
)

// TestErrors: nil for none, the one error as it is, every other refusal in
// the first one's message, a field refused once.
func TestErrors(t *testing.T) {
	type add struct{ path, msg string }
	for _, tc := range []struct {
		name       string
		adds       []add
		field, msg string // "" field: no error
	}{
		{"none", nil, "", ""},
		{"one", []add{{"config.a", "bad"}}, "config.a", "bad"},
		{"three", []add{{"config.b[1]", "one"}, {"config.a", "two"}, {"config.c.d", "three"}},
			"config.b[1]", "one (and 2 more: config.a: two; config.c.d: three)"},
		{"same field twice", []add{{"config.a", "first"}, {"config.a", "second"}}, "config.a", "first"},
		{"inside a refused field", []add{{"config.a", "whole"}, {"config.a.b", "part"}, {"config.a[0]", "entry"}}, "config.a", "whole"},
		{"a name that starts alike", []add{{"config.a", "one"}, {"config.ab", "two"}, {"config.a_b", "three"}},
			"config.a", "one (and 2 more: config.ab: two; config.a_b: three)"},
		{"the field holding a refused one", []add{{"config.a.b", "part"}, {"config.a", "whole"}},
			"config.a.b", "part (and 1 more: config.a: whole)"},
		{"the whole document", []add{{"", "not an object"}, {"a", "unknown"}}, "", "not an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errs policyconfig.Errors
			for _, a := range tc.adds {
				errs.Add(a.path, "%s", a.msg)
			}
			err := errs.Err()
			if tc.field == "" && tc.msg == "" {
				if err != nil {
					t.Fatalf("Err() = %v, want nil", err)
				}
				return
			}
			pe, ok := errors.AsType[*abi.PolicyError](err)
			if !ok {
				t.Fatalf("Err() = %v, want a PolicyError", err)
			}
			if pe.Code != abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || pe.Field != tc.field || pe.Message != tc.msg {
				t.Errorf("Err() = %v at %q: %q; want INVALID_ARGUMENT at %q: %q", pe.Code, pe.Field, pe.Message, tc.field, tc.msg)
			}
		})
	}
}

func TestErrorsRefused(t *testing.T) {
	var errs policyconfig.Errors
	errs.Add("config.types[1]", "want an object")
	errs.Add("config.pin", "want true or false")
	for path, want := range map[string]bool{
		"config.types[1]": true, "config.types[1].name": true, "config.types[1][0]": true, "config.pin": true,
		"config.types": false, "config.types[10]": false, "config.types[0].name": false, "config.pinned": false, "config": false,
	} {
		if got := errs.Refused(path); got != want {
			t.Errorf("Refused(%q) = %t, want %t", path, got, want)
		}
	}
}

// TestDecoderErrors: a decode function's value checks come in the one
// error, after the fields decoding refused; a check of a field decoding
// refused adds nothing.
func TestDecoderErrors(t *testing.T) {
	_, err := policyconfig.DecodeFunc([]byte(`{items: [{name: 1, count: -1}, {name: b, count: -2}], colour: red}`), policyconfig.Root,
		func(d *policyconfig.Decoder, v policyconfig.Value) {
			var c handConfig
			decodeHandConfig(d, v, &c)
			for i, it := range c.Items {
				if it.Name == "" {
					d.Errors().Add(policyconfig.Path(v.Path, "items", i, "name"), "required")
				}
				if it.Count < 0 {
					d.Errors().Add(policyconfig.Path(v.Path, "items", i, "count"), "%d: want 0 or more", it.Count)
				}
			}
		})
	want := `INVALID_ARGUMENT: config.colour: unknown field (known: inner, items, on, pin) (and 3 more: ` +
		`config.items[0].name: want a string, got the number 1; ` +
		`config.items[0].count: -1: want 0 or more; config.items[1].count: -2: want 0 or more)`
	if got := fmt.Sprint(err); got != want {
		t.Errorf("error %s\nwant  %s", got, want)
	}
}

func ExampleErrors() {
	var errs policyconfig.Errors
	errs.Add(policyconfig.Path(policyconfig.Root, "minCPUs"), "%d: want 0 or more", -3)
	errs.Add(policyconfig.Path(policyconfig.Root, "maxCPUs"), "%d: want -1 or more", -2)
	errs.Add(policyconfig.Path(policyconfig.Root, "minCPUs"), "above maxCPUs")
	pe, _ := errors.AsType[*abi.PolicyError](errs.Err())
	fmt.Println(pe.Field + ": " + pe.Message)
	// Output: config.minCPUs: -3: want 0 or more (and 1 more: config.maxCPUs: -2: want -1 or more)
}
