package wasm

import (
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// FuzzResponse: decoding a policy's answer and checking it never panics, and
// an answer the checks pass encodes back to one that passes them too.
func FuzzResponse(f *testing.F) {
	for _, r := range []*abi.Response{
		{Result: &abi.Response_Init{Init: &abi.InitResponse{}}},
		{Result: &abi.Response_CreateContainer{CreateContainer: &abi.CreateContainerResponse{Adjustment: &abi.ContainerAdjustment{
			CpusetCpus: "0-3", Annotations: map[string]string{"a": "b"}, Env: []*abi.KeyValue{{Key: "K", Value: "V"}},
			MemoryPolicy: &abi.MemoryPolicy{Mode: abi.MemoryPolicyMode_MEMORY_POLICY_MODE_BIND, Nodes: "0"}}}}},
		{Result: &abi.Response_Error{Error: &abi.Error{Code: abi.ErrorCode_ERROR_CODE_INTERNAL, Message: "m", Field: "f"}}},
	} {
		b, err := r.MarshalVT()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		resp := &abi.Response{}
		if err := resp.UnmarshalVT(raw); err != nil {
			return
		}
		if checkResponse(resp) != nil {
			return
		}
		b, err := resp.MarshalVT()
		if err != nil {
			t.Fatalf("a checked answer does not encode: %v", err)
		}
		again := &abi.Response{}
		if err := again.UnmarshalVT(b); err != nil {
			t.Fatalf("a checked answer does not decode after encoding: %v", err)
		}
		if err := checkResponse(again); err != nil {
			t.Fatalf("a checked answer fails the checks after a round trip: %v", err)
		}
	})
}
