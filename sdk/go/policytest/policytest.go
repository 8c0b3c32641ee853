// Package policytest is test support for Go policy authors: a fake
// runtime that drives a policy through any abi.Transport and holds what
// containerd would (each container's cpuset and mems, adjustments and
// updates applied), checks of what a placement must never break, the
// fixture machines as InitRequest topologies, a Tee that compares two
// builds of a policy call by call, and percentiles for benchmarks.
//
// A policy's tests open a Runtime on its native build (sdk/go/native) or,
// to compare the native build with the .wasm, on a Tee of both; the .wasm
// side comes from the host (host/wasm/wasmtest.Pool), which the SDK does not
// import (sdk/go/RATIONALE.md says why).
//
//	r, _ := native.New(mypolicy.New())
//	rt, err := policytest.Open(t, r, &abi.InitRequest{Topology: policytest.Machine(t, "Desktop1Socket")})
//	rt.Create(policytest.Container("c1", 2000).Guaranteed())
//	policytest.CheckPlacements(t, rt.Topology, rt.Containers)
package policytest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// WantError fails tb unless err is a policy error with code on field.
func WantError(tb testing.TB, err error, code abi.ErrorCode, field string) {
	tb.Helper()
	pe, ok := errors.AsType[*abi.PolicyError](err)
	if !ok {
		tb.Fatalf("error %v (%T), want a PolicyError %v on %q", err, err, code, field)
	}
	if pe.Code != code || pe.Field != field {
		tb.Fatalf("error %v (field %q), want code %v on field %q", err, pe.Field, code, field)
	}
}

// MustSet parses a cpuset list ("0-3,8"), failing tb on a bad one.
func MustSet(tb testing.TB, s string) cpuset.Set {
	tb.Helper()
	set, err := cpuset.Parse(s)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return set
}

// IDs are n ids prefix0000, prefix0001, …: sorted as strings.
func IDs(n int, prefix string) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%04d", prefix, i)
	}
	return ids
}
