package v1_test

import (
	"errors"
	"fmt"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

func TestPolicyErrorError(t *testing.T) {
	tests := []struct {
		name string
		err  *abi.PolicyError
		want string
	}{
		{
			name: "code and message",
			err:  &abi.PolicyError{Code: abi.ErrorCode_ERROR_CODE_INTERNAL, Message: "boom"},
			want: "INTERNAL: boom",
		},
		{
			name: "with field",
			err:  &abi.PolicyError{Code: abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Field: "config", Message: "bad"},
			want: "INVALID_ARGUMENT: config: bad",
		},
		{
			name: "with method",
			err:  &abi.PolicyError{Method: abi.Method_METHOD_CREATE_CONTAINER, Code: abi.ErrorCode_ERROR_CODE_NOT_FOUND, Message: "gone"},
			want: "CreateContainer: NOT_FOUND: gone",
		},
		{
			name: "with method and field",
			err: &abi.PolicyError{
				Method: abi.Method_METHOD_ALLOCATE, Code: abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED,
				Field: "claim.results", Message: "no room",
			},
			want: "Allocate: RESOURCE_EXHAUSTED: claim.results: no room",
		},
		{
			name: "unknown method",
			err:  &abi.PolicyError{Method: abi.Method(99), Code: abi.ErrorCode_ERROR_CODE_UNIMPLEMENTED, Message: "what"},
			want: "Method(99): UNIMPLEMENTED: what",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorf(t *testing.T) {
	err := abi.Errorf(abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "container.name", "name %q has %d chars", "ab", 2)
	if err.Method != abi.Method_METHOD_UNSPECIFIED {
		t.Errorf("Method = %v, want METHOD_UNSPECIFIED", err.Method)
	}
	if err.Code != abi.ErrorCode_ERROR_CODE_INVALID_ARGUMENT {
		t.Errorf("Code = %v, want INVALID_ARGUMENT", err.Code)
	}
	if err.Field != "container.name" {
		t.Errorf("Field = %q, want %q", err.Field, "container.name")
	}
	if want := `name "ab" has 2 chars`; err.Message != want {
		t.Errorf("Message = %q, want %q", err.Message, want)
	}
}

func TestToProto(t *testing.T) {
	pe := abi.Errorf(abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, "pod.name", "full")
	tests := []struct {
		name string
		err  error
		want *abi.Error
	}{
		{
			name: "policy error",
			err:  pe,
			want: &abi.Error{Code: abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, Field: "pod.name", Message: "full"},
		},
		{
			name: "wrapped policy error",
			err:  fmt.Errorf("x: %w", pe),
			want: &abi.Error{Code: abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, Field: "pod.name", Message: "full"},
		},
		{
			name: "doubly wrapped policy error",
			err:  fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", pe)),
			want: &abi.Error{Code: abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, Field: "pod.name", Message: "full"},
		},
		{
			name: "joined policy error",
			err:  errors.Join(errors.New("first"), pe),
			want: &abi.Error{Code: abi.ErrorCode_ERROR_CODE_RESOURCE_EXHAUSTED, Field: "pod.name", Message: "full"},
		},
		{
			name: "plain error",
			err:  errors.New("disk on fire"),
			want: &abi.Error{Code: abi.ErrorCode_ERROR_CODE_INTERNAL, Message: "disk on fire"},
		},
		{
			name: "wrapped plain error",
			err:  fmt.Errorf("x: %w", errors.New("y")),
			want: &abi.Error{Code: abi.ErrorCode_ERROR_CODE_INTERNAL, Message: "x: y"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := abi.ToProto(tt.err)
			if !got.EqualVT(tt.want) {
				t.Errorf("ToProto() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMethodShort(t *testing.T) {
	tests := []struct {
		m    abi.Method
		want string
	}{
		{abi.Method_METHOD_INFO, "Info"},
		{abi.Method_METHOD_INIT, "Init"},
		{abi.Method_METHOD_RECONFIGURE, "Reconfigure"},
		{abi.Method_METHOD_DEVICES, "Devices"},
		{abi.Method_METHOD_ALLOCATE, "Allocate"},
		{abi.Method_METHOD_RELEASE, "Release"},
		{abi.Method_METHOD_SYNCHRONIZE, "Synchronize"},
		{abi.Method_METHOD_RUN_POD_SANDBOX, "RunPodSandbox"},
		{abi.Method_METHOD_CREATE_CONTAINER, "CreateContainer"},
		{abi.Method_METHOD_UPDATE_CONTAINER, "UpdateContainer"},
		{abi.Method_METHOD_STOP_CONTAINER, "StopContainer"},
		{abi.Method_METHOD_REMOVE_CONTAINER, "RemoveContainer"},
		{abi.Method_METHOD_STOP_POD_SANDBOX, "StopPodSandbox"},
		{abi.Method_METHOD_REMOVE_POD_SANDBOX, "RemovePodSandbox"},
		{abi.Method_METHOD_DUMP_STATE, "DumpState"},
		{abi.Method_METHOD_UNSPECIFIED, "Method(0)"},
		{abi.Method(99), "Method(99)"},
		{abi.Method(-1), "Method(-1)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.m.Short(); got != tt.want {
				t.Errorf("Method(%d).Short() = %q, want %q", int32(tt.m), got, tt.want)
			}
		})
	}
}

// Every method the ABI enumerates has a short name.
func TestMethodShortCoversEnum(t *testing.T) {
	for num, full := range abi.Method_name {
		m := abi.Method(num)
		if m == abi.Method_METHOD_UNSPECIFIED {
			continue
		}
		t.Run(full, func(t *testing.T) {
			if got, unknown := m.Short(), fmt.Sprintf("Method(%d)", num); got == unknown {
				t.Errorf("%s has no short name", full)
			}
		})
	}
}
