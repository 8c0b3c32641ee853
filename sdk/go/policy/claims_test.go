package policy_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

const driver = "example.nri.io"

func prepared(uids ...string) func(string) bool {
	return func(uid string) bool { return slices.Contains(uids, uid) }
}

// envClaim matches DRA_EXAMPLE_<uid> variables whose value is "ok".
func envClaim(key, value string) (string, bool) {
	for _, uid := range []string{"u-1", "u-2"} {
		if key == policy.ClaimEnvName("DRA_EXAMPLE_", uid) && value == "ok" {
			return uid, true
		}
	}
	return "", false
}

func TestContainerClaims(t *testing.T) {
	env := func(kv ...string) []*abi.KeyValue {
		var out []*abi.KeyValue
		for _, s := range kv {
			k, v, _ := strings.Cut(s, "=")
			out = append(out, &abi.KeyValue{Key: k, Value: v})
		}
		return out
	}
	tests := []struct {
		name string
		c    *abi.Container
		want []string
		err  string // the refused field
	}{
		{"by CDI devices, once each", &abi.Container{CdiDevices: []string{
			abi.CDIDeviceName(driver, "u-2", 0), "other.io/gpu=0", abi.CDIDeviceName(driver, "u-1", 0), abi.CDIDeviceName(driver, "u-2", 1),
		}}, []string{"u-2", "u-1"}, ""},
		{"CDI devices decide: env ignored", &abi.Container{CdiDevices: []string{"other.io/gpu=0"}, Env: env("DRA_EXAMPLE_u_1=ok")}, nil, ""},
		{"env only without CDI devices", &abi.Container{Env: env("DRA_EXAMPLE_u_1=ok", "DRA_EXAMPLE_u_2=forged")}, []string{"u-1"}, ""},
		{"an unprepared claim's CDI device", &abi.Container{CdiDevices: []string{abi.CDIDeviceName(driver, "u-9", 0)}}, nil, "container.cdi_devices[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := policy.ContainerClaims(driver, tt.c, prepared("u-1", "u-2"), envClaim)
			if tt.err != "" {
				pe, ok := errors.AsType[*abi.PolicyError](err)
				if !ok || pe.Field != tt.err || pe.Code != abi.ErrorCode_ERROR_CODE_FAILED_PRECONDITION {
					t.Fatalf("err = %v, want FAILED_PRECONDITION naming %s", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ContainerClaims = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestClaimEnvName(t *testing.T) {
	if got := policy.ClaimEnvName("DRA_CPUSET_", "0b6f3e1c-8a54"); got != "DRA_CPUSET_0b6f3e1c_8a54" {
		t.Errorf("ClaimEnvName = %q", got)
	}
}
