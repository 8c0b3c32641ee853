package balloons_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/internal/builtintest"
	"github.com/nriwasm/nriwasm/policies/balloons"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
	"github.com/nriwasm/nriwasm/sdk/go/policytest"
)

// machines are the fixture machines the tests run on.
var machines = policytest.VariedMachines

// harness drives one policy instance through a fake runtime
// (policytest.Runtime) that keeps every container's current cpuset and
// mems, each adjustment and update applied. After every call that changes
// something it checks the invariants (check).
type harness struct {
	*policytest.Runtime
	// noCheck turns the invariant checks off (benchmarks).
	noCheck bool
}

// opener starts a policy instance on a machine: natively, or natively and
// in Wasm at once (the identity suite).
type opener = policytest.Opener[*harness]

// builds are the policy's Go build and its built-in .wasm, which the host's
// runtime runs (builtintest.Builds).
var builds = builtintest.Builds(balloons.Name, func() policy.Policy { return balloons.New() })

func TestMain(m *testing.M) { builtintest.Main(m) }

var nativeOpen = policytest.NativeOpener(builds, openOn)

func openOn(tb testing.TB, t abi.Transport, machine, config string, restore *abi.RestoreState) (*harness, error) {
	rt, err := policytest.OpenOnMachine(tb, t, machine, config, restore)
	h := &harness{Runtime: rt}
	rt.AfterChange = h.check
	return h, err
}

func mustOpen(tb testing.TB, open opener, machine, config string) *harness {
	tb.Helper()
	h, err := open(tb, machine, config, nil)
	if err != nil {
		tb.Fatalf("Init(%q): %v", config, err)
	}
	h.check()
	return h
}

// spec describes a test container.
type spec = policytest.Spec

func ctr(id string, milli int64) spec { return policytest.Container(id, milli) }

func (h *harness) dump() balloons.Dump {
	h.TB.Helper()
	resp, err := h.Client.DumpState(context.Background(), &abi.DumpStateRequest{})
	if err != nil {
		h.TB.Fatalf("DumpState: %v", err)
	}
	var d balloons.Dump
	if err := json.Unmarshal(resp.Json, &d); err != nil {
		h.TB.Fatalf("dump: %v", err)
	}
	// The policy writes its dump without encoding/json: every dump a test
	// reads is also the JSON encoding/json writes for it.
	if want, err := json.Marshal(d); err != nil || !bytes.Equal(resp.Json, want) {
		h.TB.Fatalf("DumpState's JSON\n%s\nencoding/json writes\n%s (%v)", resp.Json, want, err)
	}
	return d
}

// balloonOf is the name of the balloon the policy put a container in.
func (h *harness) balloonOf(id string) string {
	h.TB.Helper()
	for _, c := range h.dump().Containers {
		if c.ID == id {
			return c.Balloon
		}
	}
	h.TB.Fatalf("no container %s", id)
	return ""
}

func (h *harness) balloon(name string) balloons.DumpBalloon {
	h.TB.Helper()
	for _, b := range h.dump().Balloons {
		if b.Name == name {
			return b
		}
	}
	h.TB.Fatalf("no balloon %s", name)
	return balloons.DumpBalloon{}
}
