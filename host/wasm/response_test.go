package wasm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/wasm"
	"github.com/nriwasm/nriwasm/host/wasm/wasmtest"
)

func createAnswer(adj *abi.ContainerAdjustment) *abi.Response {
	return &abi.Response{Result: &abi.Response_CreateContainer{CreateContainer: &abi.CreateContainerResponse{Adjustment: adj}}}
}

// TestResponseBounds has a policy answer what the host must not take: each is
// refused with ErrMalformedResponse naming the field or the limit, and the
// instance is rebuilt for the next call.
func TestResponseBounds(t *testing.T) {
	tests := []struct {
		name string
		resp *abi.Response
		want string
	}{
		{"answer over the size limit", createAnswer(&abi.ContainerAdjustment{
			Annotations: map[string]string{"a": strings.Repeat("x", 100<<10), "b": strings.Repeat("y", 100<<10), "c": strings.Repeat("z", 100<<10)}}),
			"exceeds the limit of 263168 bytes"},
		{"string over its limit", createAnswer(&abi.ContainerAdjustment{
			Annotations: map[string]string{"big": strings.Repeat("x", wasm.MaxResponseString+1)}}),
			`response.create_container.adjustment.annotations["big"]: 262145 bytes, more than the limit of 262144`},
		{"invalid UTF-8", createAnswer(&abi.ContainerAdjustment{RdtClass: "gold\xff"}),
			"response.create_container.adjustment.rdt_class: \"gold\\xff\" is not valid UTF-8"},
		{"memory policy mode out of range", createAnswer(&abi.ContainerAdjustment{
			MemoryPolicy: &abi.MemoryPolicy{Mode: abi.MemoryPolicyMode(-3)}}),
			"response.create_container.adjustment.memory_policy.mode: -3 is not a value of"},
		{"memory policy flag out of range", createAnswer(&abi.ContainerAdjustment{
			MemoryPolicy: &abi.MemoryPolicy{Mode: abi.MemoryPolicyMode_MEMORY_POLICY_MODE_BIND, Flags: []abi.MemoryPolicyFlag{1, 9}}}),
			"response.create_container.adjustment.memory_policy.flags[1]: 9 is not a value of"},
		{"error code out of range", &abi.Response{Result: &abi.Response_Error{Error: &abi.Error{Code: 42, Message: "no"}}},
			"response.error.code: 42 is not a value of"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer, err := tt.resp.MarshalVT()
			if err != nil {
				t.Fatal(err)
			}
			p, err := wasm.Load(ctx, "answering", wasmtest.AnsweringModule(answer, 0),
				wasm.WithResponseLimit(wasm.MaxResponseString+1024), wasm.WithLogger(logr.Discard()))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			_, err = p.Call(ctx, abi.Method_METHOD_CREATE_CONTAINER, &abi.CreateContainerRequest{})
			if !errors.Is(err, wasm.ErrMalformedResponse) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Call error = %v, want %v containing %q", err, wasm.ErrMalformedResponse, tt.want)
			}
			_, _ = p.Call(ctx, abi.Method_METHOD_CREATE_CONTAINER, &abi.CreateContainerRequest{})
			if p.Rebuilds() != 1 {
				t.Fatalf("rebuilds = %d after a refused answer, want 1", p.Rebuilds())
			}
		})
	}
}
