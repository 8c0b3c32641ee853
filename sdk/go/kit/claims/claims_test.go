package claims_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/kit/claims"
)

const driver = "dra.example.com"

type claim struct{ uid, cpus string }

var prepared = map[string]*claim{
	"a-1": {"a-1", "0-1"},
	"a_1": {"a_1", "2-3"}, // names the same variable as a-1
	"b-2": {"b-2", "4"},
}

var finder = claims.Finder[*claim]{Driver: driver, EnvPrefix: "DRA_CPUS_", EnvValue: func(c *claim) string { return c.cpus }}

func uids(cs []*claim) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.uid)
	}
	return out
}

func env(kv ...string) []*abi.KeyValue {
	var out []*abi.KeyValue
	for i := 0; i < len(kv); i += 2 {
		out = append(out, &abi.KeyValue{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func TestOfByCDIDevices(t *testing.T) {
	c := &abi.Container{
		CdiDevices: []string{abi.CDIDeviceName(driver, "b-2", 0), "vendor.com/gpu=0", abi.CDIDeviceName(driver, "a-1", 0), abi.CDIDeviceName(driver, "b-2", 1)},
		// The environment is ignored when CDI devices are reported.
		Env: env("DRA_CPUS_a_1", "2-3"),
	}
	got, err := finder.Of(c, prepared)
	if err != nil || !slices.Equal(uids(got), []string{"b-2", "a-1"}) {
		t.Errorf("Of = %v, %v; want [b-2 a-1]", uids(got), err)
	}
}

func TestOfRefusesUnpreparedCDIClaim(t *testing.T) {
	c := &abi.Container{CdiDevices: []string{abi.CDIDeviceName(driver, "gone", 0)}}
	_, err := finder.Of(c, prepared)
	var pe *abi.PolicyError
	if !errors.As(err, &pe) || pe.Code != abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION || pe.Field != "container.cdi_devices[0]" {
		t.Errorf("Of = %v; want FAILED_PRECONDITION on container.cdi_devices[0]", err)
	}
}

// TestOfByEnvironment: without CDI devices, a variable names a claim only
// with exactly its value; of two uids sharing a variable name, the value
// decides.
func TestOfByEnvironment(t *testing.T) {
	for _, tc := range []struct {
		env  []*abi.KeyValue
		want []string
	}{
		{env("DRA_CPUS_a_1", "0-1"), []string{"a-1"}},
		{env("DRA_CPUS_a_1", "2-3"), []string{"a_1"}},
		{env("DRA_CPUS_a_1", "7"), nil},
		{env("DRA_CPUS_b_2", "4", "PATH", "/bin", "DRA_CPUS_a_1", "0-1"), []string{"b-2", "a-1"}},
		{env("OTHER_b_2", "4"), nil},
	} {
		got, err := finder.Of(&abi.Container{Env: tc.env}, prepared)
		if err != nil || !slices.Equal(uids(got), tc.want) {
			t.Errorf("env %v: %v, %v; want %v", tc.env, uids(got), err, tc.want)
		}
	}
	noEnv := finder
	noEnv.EnvPrefix = ""
	if got, err := noEnv.Of(&abi.Container{Env: env("DRA_CPUS_a_1", "0-1")}, prepared); err != nil || len(got) != 0 {
		t.Errorf("without EnvPrefix: %v, %v; want none", uids(got), err)
	}
}

// TestRepeated: a repeat gets the first answer, a new claim none, an empty
// uid and other results are refused by field.
func TestRepeated(t *testing.T) {
	first := &abi.Claim{Uid: "u", Results: []*abi.DeviceAllocation{{Device: "d0"}}}
	allocated := map[string]*abi.Claim{"u": first}
	self := func(c *abi.Claim) *abi.Claim { return c }
	answer := func(c *abi.Claim) []*abi.PreparedDevice {
		return []*abi.PreparedDevice{{Device: c.GetResults()[0].GetDevice()}}
	}
	if resp, err := claims.Repeated(first.CloneVT(), allocated, self, answer); err != nil || len(resp.GetDevices()) != 1 || resp.GetDevices()[0].GetDevice() != "d0" {
		t.Errorf("a repeat: %v, %v; want the first answer", resp, err)
	}
	if resp, err := claims.Repeated(&abi.Claim{Uid: "v"}, allocated, self, answer); err != nil || resp != nil {
		t.Errorf("a new claim: %v, %v; want none", resp, err)
	}
	var pe *abi.PolicyError
	if _, err := claims.Repeated(&abi.Claim{}, allocated, self, answer); !errors.As(err, &pe) || pe.Field != "claim.uid" {
		t.Errorf("no uid: %v, want a refusal of claim.uid", err)
	}
	other := &abi.Claim{Uid: "u", Results: []*abi.DeviceAllocation{{Device: "d1"}}}
	if _, err := claims.Repeated(other, allocated, self, answer); !errors.As(err, &pe) || pe.Code != abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION || pe.Field != "claim.results" {
		t.Errorf("other results: %v, want FAILED_PRECONDITION on claim.results", err)
	}
}

// TestAllocate: a new claim is allocated once and answered with its devices
// and the updates read after it; a repeat gets the first answer without
// allocating again; the allocation's error is the answer's.
func TestAllocate(t *testing.T) {
	allocated := map[string]*abi.Claim{}
	self := func(c *abi.Claim) *abi.Claim { return c }
	answer := func(c *abi.Claim) []*abi.PreparedDevice {
		return []*abi.PreparedDevice{{Device: c.GetResults()[0].GetDevice()}}
	}
	calls := 0
	allocate := func(c *abi.Claim) (*abi.Claim, error) {
		calls++
		if c.GetResults()[0].GetDevice() == "busy" {
			return nil, abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "claim.results", "busy")
		}
		allocated[c.GetUid()] = c
		return c, nil
	}
	updates := func() []*abi.ContainerUpdate {
		return []*abi.ContainerUpdate{{ContainerId: fmt.Sprint("after ", len(allocated))}}
	}
	claim := &abi.Claim{Uid: "u", Results: []*abi.DeviceAllocation{{Device: "d0"}}}
	resp, err := claims.Allocate(claim, allocated, self, answer, allocate, updates)
	if err != nil || len(resp.GetDevices()) != 1 || resp.GetDevices()[0].GetDevice() != "d0" || len(resp.GetUpdates()) != 1 || resp.GetUpdates()[0].GetContainerId() != "after 1" {
		t.Errorf("a new claim: %v, %v; want device d0 and the update read after allocating", resp, err)
	}
	resp, err = claims.Allocate(claim.CloneVT(), allocated, self, answer, allocate, nil)
	if err != nil || calls != 1 || len(resp.GetDevices()) != 1 || len(resp.GetUpdates()) != 0 {
		t.Errorf("a repeat: %v, %v after %d allocations; want the first devices, no update, one allocation", resp, err, calls)
	}
	var pe *abi.PolicyError
	busy := &abi.Claim{Uid: "v", Results: []*abi.DeviceAllocation{{Device: "busy"}}}
	if resp, err := claims.Allocate(busy, allocated, self, answer, allocate, updates); !errors.As(err, &pe) || pe.Code != abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED || resp != nil {
		t.Errorf("a failed allocation: %v, %v; want its RESOURCE_EXHAUSTED", resp, err)
	}
}

// TestRelease: an unknown claim is released already, without calling
// release; a known one is released and answered with the updates read after
// it; release's error is the answer's.
func TestRelease(t *testing.T) {
	prepared := map[string]string{"u": "held", "v": "free"}
	var released []string
	release := func(c string) error {
		if c == "held" {
			return abi.Errorf(abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "claim.uid", "still held")
		}
		released = append(released, c)
		delete(prepared, "v")
		return nil
	}
	updates := func() []*abi.ContainerUpdate {
		return []*abi.ContainerUpdate{{ContainerId: fmt.Sprint(len(prepared), " left")}}
	}
	if resp, err := claims.Release(&abi.Claim{Uid: "w"}, prepared, release, updates); err != nil || len(resp.GetUpdates()) != 0 || len(released) != 0 {
		t.Errorf("an unknown claim: %v, %v, released %v; want an empty answer, nothing released", resp, err, released)
	}
	var pe *abi.PolicyError
	if resp, err := claims.Release(&abi.Claim{Uid: "u"}, prepared, release, updates); !errors.As(err, &pe) || pe.Code != abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION || resp != nil {
		t.Errorf("a held claim: %v, %v; want release's FAILED_PRECONDITION", resp, err)
	}
	resp, err := claims.Release(&abi.Claim{Uid: "v"}, prepared, release, updates)
	if err != nil || len(released) != 1 || len(resp.GetUpdates()) != 1 || resp.GetUpdates()[0].GetContainerId() != "1 left" {
		t.Errorf("a free claim: %v, %v, released %v; want it released and the update read after", resp, err, released)
	}
	if resp, err := claims.Release(&abi.Claim{Uid: "v"}, prepared, release, nil); err != nil || len(released) != 1 || len(resp.GetUpdates()) != 0 {
		t.Errorf("released again: %v, %v; want an empty answer", resp, err)
	}
}

// TestOfByOwnEnvName: a Finder with EnvName matches the variables it names
// (here the uid as it is, '-' kept), not ClaimEnvName's.
func TestOfByOwnEnvName(t *testing.T) {
	f := finder
	f.EnvName = func(uid string) string { return claims.EnvName(f.EnvPrefix, uid) }
	got, err := f.Of(&abi.Container{Env: env("DRA_CPUS_a-1", "0-1")}, prepared)
	if err != nil || !slices.Equal(uids(got), []string{"a-1"}) {
		t.Errorf("Of = %v, %v; want [a-1]", uids(got), err)
	}
	if got, _ := f.Of(&abi.Container{Env: env("DRA_CPUS_a_1", "0-1")}, prepared); len(got) != 0 {
		t.Errorf("Of found %v by a name EnvName does not give", uids(got))
	}
}
