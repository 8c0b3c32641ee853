package policytest

import (
	"context"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Tee is a transport that makes every call on two builds of a policy
// (typically the native one and the .wasm, which host/wasm/wasmtest lends),
// requires equal answers (EqualVT, which both generated codecs have), policy errors included, and hands on Want's.
// Calls counts the calls compared.
type Tee struct {
	TB testing.TB
	// Want is the reference build (native); Got the one compared to it.
	Want, Got abi.Transport
	Calls     *int
}

// Call implements abi.Transport.
func (t Tee) Call(ctx context.Context, method abi.Method, req abi.Message) (*abi.Response, error) {
	t.TB.Helper()
	want, err := t.Want.Call(ctx, method, req)
	if err != nil {
		t.TB.Fatalf("call %d %s on the reference: %v", *t.Calls, method.Short(), err)
	}
	got, err := t.Got.Call(ctx, method, req)
	if err != nil {
		t.TB.Fatalf("call %d %s on the build compared: %v", *t.Calls, method.Short(), err)
	}
	if !got.EqualVT(want) {
		t.TB.Fatalf("call %d %s: the build compared answered\n%v\nthe reference\n%v", *t.Calls, method.Short(), got, want)
	}
	*t.Calls++
	return want, nil
}
